import Foundation

/// A running `offpeak-sim` on a free loopback port, stopped when the test is done with it.
public final class SimProcess: @unchecked Sendable {
    public let process: Process
    public let url: String
    public let port: Int

    /// Starts the built sim with `--port 0` and reads the port from its first line.
    public init(arguments: [String] = []) throws {
        process = Process()
        process.executableURL = BuiltBinaries.sim
        process.arguments = ["--port", "0"] + arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let line = out.firstLine()
        // `--host 0.0.0.0` (every address) is reached here on 127.0.0.1 too.
        guard let range = line.range(of: "http://127.0.0.1:") ?? line.range(of: "http://0.0.0.0:"),
            let port = Int(line[range.upperBound...].prefix { $0.isNumber })
        else {
            process.terminate()
            throw SimError.noPort(line)
        }
        self.port = port
        self.url = "http://127.0.0.1:\(port)"
    }

    public enum SimError: Error { case noPort(String), badReply(String) }

    /// Stops the sim at once (as a crash or `kill -9` would).
    public func kill() {
        if process.isRunning {
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    deinit { kill() }

    /// `GET /sim/stats`, decoded.
    public func stats() throws -> [String: Any] {
        try json(try request("GET", "/sim/stats"))
    }

    /// Queues faults for the next calls (`429`, `500`, `529`, `timeout`, `truncate`, `nonjson`).
    public func queueFaults(_ faults: [String]) throws {
        let body = try JSONSerialization.data(withJSONObject: ["next": faults])
        _ = try request("POST", "/sim/faults", body: body)
    }

    /// Serves `content` as the research source `/sources/NAME`, with `status` (an error page when
    /// 400-599), through `POST /sim/sources`.
    public func setSource(
        _ name: String, content: String, contentType: String = "text/plain; charset=utf-8", status: Int = 200
    ) throws {
        let body = try JSONSerialization.data(
            withJSONObject: ["name": name, "content": content, "content_type": contentType, "status": status])
        let reply = try request("POST", "/sim/sources", body: body)
        guard (try? json(reply))?["name"] as? String == name else {
            throw SimError.badReply(String(decoding: reply, as: UTF8.self))
        }
    }

    /// `POST /sim/results-status`: every results download answers `status` from now on, or (nil)
    /// is served again.
    public func refuseResults(_ status: Int?) throws {
        let body = try JSONSerialization.data(withJSONObject: ["status": status.map { $0 as Any } ?? NSNull()]
        )
        _ = try request("POST", "/sim/results-status", body: body)
    }

    /// Billed tokens by kind, from `/sim/stats`.
    public func billed() throws -> [String: Int] {
        let stats = try stats()
        let billed = stats["billed"] as? [String: Any] ?? [:]
        return billed.compactMapValues { ($0 as? NSNumber)?.intValue }
    }

    public func request(_ method: String, _ path: String, body: Data? = nil) throws -> Data {
        let curl = URL(fileURLWithPath: "/usr/bin/curl")
        var arguments = ["-s", "-X", method, url + path]
        if let body {
            arguments += [
                "-H", "content-type: application/json", "--data-binary",
                String(decoding: body, as: UTF8.self),
            ]
        }
        let result = try CommandResult.run(curl, arguments, timeout: 10)
        return Data(result.stdout.utf8)
    }

    private func json(_ data: Data) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw SimError.badReply(String(decoding: data, as: UTF8.self))
        }
        return object
    }
}
