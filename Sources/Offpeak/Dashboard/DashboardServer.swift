import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Synchronization

/// `offpeak dashboard`: one workspace's page on loopback, read-only (issue 49).
///
/// It answers GET and HEAD only, and only to a `Host` that names the loopback address it listens
/// on (no DNS rebinding: a page of another site that resolves its name to 127.0.0.1 is refused).
/// Every answer carries a Content-Security-Policy that allows no script, no frame and nothing from
/// elsewhere, so the page works offline. Each view is also JSON, as the command line's `--json`
/// writes it (`ReportJSON`). The store is opened for reading on every request, so the page shows
/// what every process has committed.
public struct DashboardServer: Sendable {
    public struct Options: Sendable {
        /// 0: any free port.
        public var port: Int
        /// Seconds between the page's reloads (0: it does not reload).
        public var refresh: Int
        /// The address to listen on: loopback unless `--listen` names another, and then only with
        /// `token`.
        public var address: String
        /// What every request must carry when the address is not loopback; nil on loopback.
        public var token: String?

        /// - Parameter listen: `--listen`: the address to listen on instead of loopback; a token
        ///   is made for it.
        public init(port: Int = 8470, refresh: Int = 30, listen: String? = nil) {
            self.port = port
            self.refresh = refresh
            self.address = listen ?? DashboardServer.loopback
            self.token = listen.map { _ in DashboardToken.make() }
        }

        /// The address a person opens: with the token when one is needed (the page then keeps it in
        /// a cookie, so its links carry none).
        public func url(port: Int) -> String {
            "http://\(DashboardServer.authority(address, port: port))/" + (token.map { "?token=\($0)" } ?? "")
        }
    }

    let context: WorkspaceContext
    let options: Options
    let logger: Logger

    /// Logs where the workspace's context logs.
    public init(context: WorkspaceContext, options: Options) {
        self.context = context
        self.options = options
        self.logger = context.logger
    }

    /// The address it listens on unless told otherwise.
    public static let loopback = "127.0.0.1"

    /// Opens `url` in the desktop's browser (`xdg-open`), without waiting for the browser.
    /// - Throws: `.unavailable` when there is no `xdg-open` to ask, or it cannot be started.
    public static func openInBrowser(_ url: String, environment: [String: String]) throws(OffpeakError) {
        let path = (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":")
        guard
            let opener = path.map({ URL(fileURLWithPath: String($0)).appendingPathComponent("xdg-open") })
                .first(where: { FileManager.default.isExecutableFile(atPath: $0.path) })
        else {
            throw OffpeakError(
                .unavailable, "--open: no xdg-open on PATH to open the browser with; open \(url) yourself")
        }
        let process = Process()
        process.executableURL = opener
        process.arguments = [url]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch {
            throw OffpeakError(.unavailable, "--open: \(opener.path) could not be started: \(error)")
        }
    }

    /// `address:port` as a `Host` header names it (an IPv6 address in brackets).
    static func authority(_ address: String, port: Int) -> String {
        (address.contains(":") ? "[\(address)]" : address) + ":\(port)"
    }

    /// The content security policy every answer carries: nothing runs, nothing is fetched from
    /// elsewhere, the page's own style sheet only.
    static let contentSecurityPolicy =
        "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; "
        + "frame-ancestors 'none'"

    func router(port: @escaping @Sendable () -> Int) -> Router<BasicRequestContext> {
        let router = Router()
        router.add(
            middleware: GuardMiddleware(address: options.address, token: options.token, port: port))
        let views = DashboardViews(context: context, refresh: options.refresh)
        router.get("/") { request, _ in
            let raw = request.uri.queryParameters.get("days") ?? "\(DashboardViews.chartSpans[0])"
            guard let days = Int(raw), DashboardViews.chartSpans.contains(days) else {
                throw HTTPError(.badRequest, message: "days: expected 30 or 90, got \(raw)")
            }
            return views.page(days: days)
        }
        router.get("/runs/:id") { _, context in
            views.run(id: context.parameters.get("id")?.removingPercentEncoding ?? "")
        }
        // Browsers ask for it unbidden; nothing, rather than a 404 in their console.
        router.get("/favicon.ico") { _, _ in Response(status: .noContent) }
        router.get("/style.css") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/css; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: DashboardTemplates.style)))
        }
        router.get("/api/status.json") { _, _ in
            views.json { reports throws(OffpeakError) in try reports.status(limit: 20, now: Date()) }
        }
        router.get("/api/run.json") { request, _ in
            guard let id = request.uri.queryParameters.get("id"), !id.isEmpty else {
                throw HTTPError(.badRequest, message: "id: expected a run's id")
            }
            return views.json { reports throws(OffpeakError) in try reports.run(id: id, now: Date()) }
        }
        router.get("/api/queue.json") { _, _ in
            views.json { reports throws(OffpeakError) in try reports.queue(conditions: context.gate().read())
            }
        }
        router.get("/api/cache.json") { _, _ in
            views.json { reports throws(OffpeakError) in try reports.cacheStats() }
        }
        router.get("/api/hosts.json") { _, _ in
            views.json { reports throws(OffpeakError) in try reports.hosts(now: Date()) }
        }
        router.get("/api/costs.json") { request, _ in
            let by = request.uri.queryParameters.get("by") ?? "job"
            guard let grouping = CostReport.Grouping(rawValue: by) else {
                throw HTTPError(.badRequest, message: "by: expected job, model, day or tag, got \(by)")
            }
            return views.json { reports throws(OffpeakError) in try reports.costs(by: grouping) }
        }
        return router
    }

    /// Serves until SIGTERM or SIGINT.
    /// - Parameter onListening: called once with the bound port (the real one for port 0).
    public func run(onListening: @escaping @Sendable (Int) -> Void) async throws {
        let bound = BoundPort(options.port)
        let app = Application(
            router: router(port: { bound.value }),
            configuration: .init(
                address: .hostname(options.address, port: options.port), serverName: "offpeak"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? bound.value
                bound.set(port)
                onListening(port)
            },
            logger: logger)
        try await app.runService()
    }
}

/// The port the server was given by the system, once it listens.
final class BoundPort: Sendable {
    private let state: Mutex<Int>
    init(_ port: Int) { state = Mutex(port) }
    var value: Int { state.withLock { $0 } }
    func set(_ port: Int) { state.withLock { $0 = port } }
}

extension HTTPField.Name {
    /// What a response cost the server (W3C Server Timing); a valid name, so never nil.
    static let serverTiming = HTTPField.Name("Server-Timing")
}

/// Refuses what the dashboard does not answer: a `Host` other than its own address (421; on a
/// wildcard address any, the token guarding it), a method other than GET and HEAD (405), and with a
/// token a request that does not carry it (401); adds the security headers to every answer, and to
/// each it answered `Server-Timing: app;dur=MS`, the milliseconds it took.
struct GuardMiddleware<Context: RequestContext>: RouterMiddleware {
    let address: String
    let token: String?
    let port: @Sendable () -> Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        var response: Response
        let port = port()
        let own = DashboardServer.authority(address, port: port)
        var allowed = [own.lowercased()]
        if address == DashboardServer.loopback { allowed.append("localhost:\(port)") }
        let anyHost = address == "0.0.0.0" || address == "::"
        let given = DashboardToken.given(request)
        if !anyHost && !allowed.contains((request.head.authority ?? "").lowercased()) {
            response = DashboardViews.plain(
                Hummingbird.HTTPResponse.Status.misdirectedRequest,
                "offpeak dashboard answers only http://\(own)/\n")
        } else if request.method != .get && request.method != .head {
            response = DashboardViews.plain(
                Hummingbird.HTTPResponse.Status.methodNotAllowed, "offpeak dashboard is read-only\n")
            response.headers[.allow] = "GET, HEAD"
        } else if let token, !DashboardToken.matches(given.token, token) {
            response = DashboardViews.plain(
                Hummingbird.HTTPResponse.Status.unauthorized,
                "offpeak dashboard: open the address it printed, with its token\n")
            response.headers[.wwwAuthenticate] = "Bearer"
        } else {
            let started = ContinuousClock.now
            do { response = try await next(request, context) } catch let error as HTTPError {
                response = DashboardViews.plain(error.status, (error.body ?? "\(error.status)") + "\n")
            }
            // What the page cost the server, for a browser's network panel and the bench.
            let spent = ContinuousClock.now - started
            let milliseconds =
                Double(spent.components.seconds) * 1000 + Double(spent.components.attoseconds) / 1e15
            if let name = HTTPField.Name.serverTiming {
                response.headers[name] = String(format: "app;dur=%.1f", milliseconds)
            }
            if let token, given.inQuery {
                response.headers[.setCookie] =
                    "\(DashboardToken.cookie)=\(token); HttpOnly; SameSite=Strict; Path=/"
            }
        }
        response.headers[.contentSecurityPolicy] = DashboardServer.contentSecurityPolicy
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.cacheControl] = "no-store"
        return response
    }
}

/// The token `--listen` asks for: made at start, printed in the address, then carried by the
/// browser in a cookie (or by a script as `Authorization: Bearer`).
enum DashboardToken {
    static let cookie = "offpeak_token"

    /// 32 random bytes in hex.
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }
            .joined()
    }

    /// The token the request carries: in its query (`?token=`), its cookie or its `Authorization`.
    static func given(_ request: Request) -> (token: String?, inQuery: Bool) {
        if let token = request.uri.queryParameters.get("token") { return (token, true) }
        if let authorization = request.headers[.authorization], authorization.hasPrefix("Bearer ") {
            return (String(authorization.dropFirst("Bearer ".count)), false)
        }
        for header in request.headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
                if parts.count == 2 && parts[0] == cookie { return (String(parts[1]), false) }
            }
        }
        return (nil, false)
    }

    /// Compares in time that does not depend on where they differ.
    static func matches(_ given: String?, _ token: String) -> Bool {
        guard let given else { return false }
        let (a, b) = (Array(given.utf8), Array(token.utf8))
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
