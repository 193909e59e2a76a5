import Foundation
import Testing

@testable import Offpeak

/// A tiny Python HTTP/1.1 server on a free loopback port, serving files from a temp directory,
/// echoing POST/PUT bodies, and misbehaving on purpose on `/slow` and `/truncated`.
///
/// For concurrency tests it counts the requests it is holding: `/gate` holds each until `/open` is
/// asked for (or a minute passed) and answers with the client's port (so a test can tell
/// connections apart), `/together/N` holds each until N were held at once (or 45 s passed) and
/// answers with the most ever held at once, and `/inflight` answers with the number held now.
/// Neither depends on timing: a test under a busy machine waits longer, it does not fail.
///
/// The server exits when its stdin closes (so it dies with the test process, however that ends)
/// and after two minutes in any case; SIGTERM alone is not enough, since the test runner's
/// children can inherit it ignored.
final class LocalHTTPServer {
    static let script = #"""
        import http.server, json, os, signal, sys, threading, time
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
        threading.Timer(120, os._exit, [0]).start()
        held = threading.Condition()
        count = {"now": 0, "peak": 0}
        opened = threading.Event()
        def together(n):
            with held:
                held.wait_for(lambda: count["peak"] >= n, timeout=45)
                return count["peak"]
        class Handler(http.server.SimpleHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *args): pass
            def do_GET(self):
                if self.path == "/slow":
                    time.sleep(5)
                elif self.path == "/truncated":
                    self.send_response(200); self.send_header("Content-Length", "100"); self.end_headers()
                    self.wfile.write(b"only ten.."); self.wfile.flush(); self.close_connection = True
                elif self.path == "/peer":
                    self.reply(200, str(self.client_address[1]).encode())
                elif self.path == "/gate":
                    self.hold(lambda: opened.wait(60))
                    self.reply(200, str(self.client_address[1]).encode())
                elif self.path == "/open":
                    opened.set()
                    self.reply(200, b"open")
                elif self.path.startswith("/together/"):
                    self.reply(200, str(self.hold(lambda: together(int(self.path[10:])))).encode())
                elif self.path == "/inflight":
                    with held: now = count["now"]
                    self.reply(200, str(now).encode())
                else:
                    super().do_GET()
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                echo = {"method": self.command, "type": self.headers.get("Content-Type"),
                        "expect": self.headers.get("Expect"), "agent": self.headers.get("User-Agent"),
                        "body": body.decode()}
                self.reply(201, json.dumps(echo).encode(), [("X-Echo", "a"), ("x-echo", "b")])
            do_PUT = do_POST
            def hold(self, work):
                with held:
                    count["now"] += 1
                    count["peak"] = max(count["peak"], count["now"])
                    held.notify_all()
                try:
                    return work()
                finally:
                    with held: count["now"] -= 1
            def reply(self, status, body, headers=()):
                self.send_response(status)
                for name, value in headers: self.send_header(name, value)
                self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
        os.chdir(sys.argv[1])
        class Server(http.server.ThreadingHTTPServer):
            def handle_error(self, *args): pass  # a client that hung up on purpose is no news
        server = Server(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """#

    let process = Process()
    let input = Pipe()
    let directory: URL
    let port: Int

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "offpeak-http-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data("hello from a file\n".utf8).write(to: directory.appendingPathComponent("hello.txt"))
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.script, directory.path]
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            try? input.fileHandleForWriting.close()
            process.terminate()
            throw CocoaError(.fileReadUnknown)
        }
        self.port = port
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    private func stop() {
        try? input.fileHandleForWriting.close()
        process.terminate()
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }
}

struct HTTPClientTests {
    let client = HTTPClient()

    @Test(.timeLimit(.minutes(1))) func getsAFileAndA404() throws {
        let server = try LocalHTTPServer()
        let response = try client.send(HTTPRequest(url: server.url("/hello.txt")))
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "hello from a file\n")
        #expect(response.header("Content-Length") == "18")
        #expect(try client.send(HTTPRequest(url: server.url("/missing.txt"))).status == 404)
    }

    @Test(.timeLimit(.minutes(1))) func postsABodyWithHeaders() throws {
        let server = try LocalHTTPServer()
        let body = String(repeating: "x", count: 5000)
        let request = HTTPRequest(
            method: "POST", url: server.url("/echo"), headers: [("content-type", "application/json")],
            body: Array(body.utf8))
        let response = try client.send(request)
        #expect(response.status == 201)
        #expect(response.header("x-echo") == "b")
        let echo = try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
        #expect(echo["method"] as? String == "POST" && echo["type"] as? String == "application/json")
        #expect(echo["body"] as? String == body)
        #expect(echo["expect"] is NSNull)
        #expect(echo["agent"] as? String == "offpeak/0.1 (+libcurl)")
        let put = try client.send(
            HTTPRequest(method: "PUT", url: server.url("/echo"), body: Array("{}".utf8)))
        #expect(put.status == 201 && put.body.contains(Array(#""method": "PUT""#.utf8)))
    }

    @Test(.timeLimit(.minutes(1))) func reusesTheConnection() throws {
        let server = try LocalHTTPServer()
        let first = try client.send(HTTPRequest(url: server.url("/peer")))
        let second = try client.send(HTTPRequest(url: server.url("/peer")))
        #expect(first.body == second.body)
    }

    @Test(.timeLimit(.minutes(1))) func closedPortCannotConnect() {
        let started = Date()
        #expect {
            try client.send(HTTPRequest(url: "http://127.0.0.1:1/", connectTimeout: 2, timeout: 5))
        } throws: { error in
            guard case .couldNotConnect = error as? TransportError else { return false }
            return true
        }
        #expect(Date().timeIntervalSince(started) < 5)
    }

    @Test(.timeLimit(.minutes(1))) func slowServerTimesOut() throws {
        let server = try LocalHTTPServer()
        #expect(throws: TransportError.timedOut(0.5)) {
            try client.send(HTTPRequest(url: server.url("/slow"), connectTimeout: 2, timeout: 0.5))
        }
    }

    @Test(.timeLimit(.minutes(1))) func cutOffBodyIsPartial() throws {
        let server = try LocalHTTPServer()
        #expect {
            try client.send(HTTPRequest(url: server.url("/truncated"), timeout: 5))
        } throws: { error in
            guard case .partial = error as? TransportError else { return false }
            return true
        }
    }

    @Test(.timeLimit(.minutes(1))) func cancellationAbortsAWaitingCall() throws {
        let server = try LocalHTTPServer()
        let flag = CancellationFlag()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { flag.cancel() }
        let started = Date()
        #expect(throws: TransportError.cancelled) {
            try client.send(HTTPRequest(url: server.url("/slow"), timeout: 30), cancellation: flag)
        }
        #expect(Date().timeIntervalSince(started) < 3)
        #expect(throws: TransportError.cancelled) {
            try client.send(HTTPRequest(url: server.url("/hello.txt")), cancellation: flag)
        }
    }

    @Test(.timeLimit(.minutes(1))) func oversizedBodyIsRefused() throws {
        let server = try LocalHTTPServer()
        let small = HTTPClient(maxResponseBytes: 8)
        #expect(throws: TransportError.responseTooLarge(limit: 8)) {
            try small.send(HTTPRequest(url: server.url("/hello.txt")))
        }
    }
}
