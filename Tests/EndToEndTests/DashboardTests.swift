import Foundation
import OffpeakTestSupport
import Testing

/// Issue 49, first step: `offpeak dashboard` through the built binary, on the suite's store. The
/// page shows the store's runs, spend and cache; its JSON views are byte for byte what `--json`
/// prints; a workspace whose very folder name is `<script>alert(1)</script>` shows as text; a
/// request naming another host (DNS rebinding) or another method is refused; every answer forbids
/// scripts; nothing the dashboard is asked changes the store.
@Suite(.ownThreads) struct DashboardTests {
    /// A running dashboard, stopped with the test.
    final class Server {
        let process = Process()
        let url: String
        /// What `--listen` printed after the address: `?token=…`; empty on loopback.
        let query: String

        init(workspace: URL, environment: [String: String], arguments: [String] = []) throws {
            process.executableURL = BuiltBinaries.offpeak
            process.arguments =
                ["dashboard", "--port", "0", "--refresh", "0"] + arguments + ["--workspace", workspace.path]
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            try process.run()
            let line = out.firstLine()
            let prefix = "offpeak dashboard: "
            #expect(line.hasPrefix(prefix + "http://"), "\(line)")
            let address = line.dropFirst(prefix.count).dropLast()  // no "\n"
            let slash = address.lastIndex(of: "/") ?? address.endIndex
            url = String(address[..<slash])
            query = slash < address.endIndex ? String(address[address.index(after: slash)...]) : ""
        }

        /// The port it listens on.
        var port: String { String(url.split(separator: ":").last ?? "") }

        deinit {
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
        }

        /// `curl` the path: its status, headers (lowercased names) and body.
        func get(_ path: String, _ extra: [String] = []) throws -> (
            status: Int, headers: [String: String], body: String
        ) {
            let result = try CommandResult.run(
                URL(fileURLWithPath: "/usr/bin/curl"), ["-s", "-i", url + path] + extra, timeout: 30)
            let parts = result.stdout.components(separatedBy: "\r\n\r\n")
            let head = parts.first?.components(separatedBy: "\r\n") ?? []
            let status = Int(head.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
            var headers: [String: String] = [:]
            for line in head.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...]
                    .trimmingCharacters(in: .whitespaces)
            }
            return (status, headers, parts.dropFirst().joined(separator: "\r\n\r\n"))
        }
    }

    static let policy =
        "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; "
        + "frame-ancestors 'none'"

    @Test func thePageShowsTheStoreAsTextAndRefusesWhatIsNotItsOwn() throws {
        let sim = try SimProcess()
        let temporary = try TemporaryWorkspace()
        let folder = temporary.root.appendingPathComponent("ws<script>alert(1)</script>")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("jobs"), withIntermediateDirectories: true)
        try "provider: sim\nbase_url: \(sim.url)\n".write(
            to: folder.appendingPathComponent("offpeak.yaml"), atomically: true, encoding: .utf8)
        try "kind: prompt\ntemplate: \"{{item}}\"\nitems: [tides, waves]\n".write(
            to: folder.appendingPathComponent("jobs/tides.yaml"), atomically: true, encoding: .utf8)
        let environment = try temporary.storeEnvironment()
        func offpeak(_ arguments: [String]) throws -> CommandResult {
            try CommandResult.run(
                BuiltBinaries.offpeak, arguments + ["--workspace", folder.path],
                environment: environment.mapValues { $0 })
        }
        let run = try offpeak(["run", "tides"])
        #expect(run.status == 0, "\(run.stderr)")
        let before = try ["status", "queue", "costs"].map { try offpeak([$0, "--json"]).stdout }

        let server = try Server(workspace: folder, environment: environment)
        let page = try server.get("/")
        #expect(page.status == 200)
        #expect(page.headers["content-security-policy"] == Self.policy)
        #expect(page.headers["content-type"] == "text/html; charset=utf-8")
        let escaped = folder.path.replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(
            of: ">", with: "&gt;")
        #expect(page.body.contains("<p id=\"workspace\">\(escaped)</p>"))
        #expect(!page.body.contains("<script>"), "nothing the store holds becomes markup")
        // "cost: $0.000123 for 2 calls, ..." as the run said it.
        let costLine = run.stdout.split(separator: "\n").first { $0.hasPrefix("cost: ") } ?? ""
        let cost = costLine.dropFirst("cost: ".count).prefix { $0 != " " }
        #expect(page.body.contains("<span id=\"spent-today\">\(cost) for 2 calls</span>"), "\(page.body)")
        #expect(page.body.contains("<td>tides</td><td>2</td>"), "spend by job")
        #expect(
            page.body.components(separatedBy: "<circle class=\"spent\"").count == 31,
            "a point a day for 30 days")

        // The JSON views are what --json prints.
        #expect(try server.get("/api/status.json").body == before[0])
        #expect(try server.get("/api/costs.json?by=job").body == before[2])
        #expect(try server.get("/api/costs.json?by=tag").status == 200)
        let bad = try server.get("/api/costs.json?by=hour")
        #expect(bad.status == 400 && bad.body == "by: expected job, model, day or tag, got hour\n")

        let rebound = try server.get(
            "/", ["-H", "Host: evil.example:\(server.url.split(separator: ":").last ?? "")"])
        #expect(rebound.status == 421)
        #expect(rebound.body == "offpeak dashboard answers only \(server.url)/\n")
        #expect(rebound.headers["content-security-policy"] == Self.policy)
        let post = try server.get("/", ["-X", "POST"])
        #expect(post.status == 405 && post.headers["allow"] == "GET, HEAD")
        #expect(post.body == "offpeak dashboard is read-only\n")

        let after = try ["status", "queue", "costs"].map { try offpeak([$0, "--json"]).stdout }
        #expect(after == before, "the store is as it was")
    }

    /// `--open` hands the address to the desktop's `xdg-open` once the page is served (here a
    /// stand-in on PATH that writes down what it was given).
    @Test func openHandsTheAddressToXdgOpen() throws {
        let temporary = try TemporaryWorkspace()
        try temporary.write("offpeak.yaml", "provider: sim\n")
        let bin = temporary.root.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let opened = temporary.root.appendingPathComponent("opened")
        let opener = bin.appendingPathComponent("xdg-open")
        try "#!/bin/sh\nprintf '%s\\n' \"$1\" > '\(opened.path)'\n".write(
            to: opener, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: opener.path)
        var environment = try temporary.storeEnvironment()
        environment["PATH"] = bin.path + ":/usr/bin:/bin"
        let server = try Server(workspace: temporary.root, environment: environment, arguments: ["--open"])
        var text = ""
        for _ in 0..<100 where text.isEmpty {
            text = (try? String(contentsOf: opened, encoding: .utf8)) ?? ""
            if text.isEmpty { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(text == server.url + "/\n")
        #expect(try server.get("/api/hosts.json").status == 200)
    }
}
