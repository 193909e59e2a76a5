import Foundation

/// A plain web site on a free loopback port: a folder served by Python's own `http.server`, as a
/// user would serve one to try a research job. It sends `Last-Modified` from each file's time and
/// answers `If-Modified-Since` with `304`, and sends no ETag: a server unlike offpeak-sim's pages.
/// Every request it answered is kept in its log (`requests()`), so a test sees what was fetched,
/// revalidated or never asked for.
public final class LocalSite: @unchecked Sendable {
    public let folder: URL
    public let url: String
    private let process = Process()
    private let log: URL
    /// How much of the log `requests()` has read.
    private var logRead: UInt64 = 0

    public init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "offpeak-site-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        log = folder.appendingPathExtension("log")
        try Data().write(to: log)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", folder.path,
        ]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        // "Serving HTTP on 127.0.0.1 port 41234 (http://127.0.0.1:41234/) ..."
        let line = out.firstLine()
        guard let range = line.range(of: " port "),
            let port = Int(line[range.upperBound...].prefix { $0.isNumber })
        else {
            process.terminate()
            throw SiteError.noPort(line)
        }
        url = "http://127.0.0.1:\(port)"
    }

    public enum SiteError: Error { case noPort(String) }

    deinit {
        // SIGKILL: a test process may hold SIGTERM blocked, and the server inherits its mask.
        if process.isRunning {
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: folder)
        try? FileManager.default.removeItem(at: log)
    }

    /// Writes `text` to `path` (relative, folders made), last modified at `modified`: the time its
    /// `Last-Modified` says, whole seconds as HTTP dates have.
    public func write(_ path: String, _ text: String, modified: Date) throws {
        let file = folder.appendingPathComponent(path)
        try FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: file)
        try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: file.path)
    }

    /// Each request answered since the last call, as `GET /path 200`, sorted (offpeak asks up to
    /// two at once of a site, so their order is not fixed).
    public func requests() throws -> [String] {
        let handle = try FileHandle(forReadingFrom: log)
        defer { try? handle.close() }
        try handle.seek(toOffset: logRead)
        let data = handle.readDataToEndOfFile()
        logRead += UInt64(data.count)
        let seen = String(decoding: data, as: UTF8.self)
        // 127.0.0.1 - - [01/Jun/2026 07:00:00] "GET /feed.xml HTTP/1.1" 304 -
        return seen.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: "\"")
            guard parts.count >= 3 else { return nil }
            let request = parts[1].split(separator: " ")
            let status = parts[2].split(separator: " ").first ?? ""
            guard request.count >= 2 else { return nil }
            return "\(request[0]) \(request[1]) \(status)"
        }.sorted()
    }
}
