import Foundation
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

        public init(port: Int = 8470, refresh: Int = 30) {
            self.port = port
            self.refresh = refresh
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

    /// The address it listens on: loopback only.
    static let host = "127.0.0.1"

    /// The content security policy every answer carries: nothing runs, nothing is fetched from
    /// elsewhere, the page's own style sheet only.
    static let contentSecurityPolicy =
        "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; "
        + "frame-ancestors 'none'"

    func router(port: @escaping @Sendable () -> Int) -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: GuardMiddleware(port: port))
        let views = DashboardViews(context: context, refresh: options.refresh)
        router.get("/") { _, _ in try views.page() }
        router.get("/style.css") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/css; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: DashboardTemplates.style)))
        }
        router.get("/api/status.json") { _, _ in try views.json { try context.status(limit: 20) } }
        router.get("/api/queue.json") { _, _ in try views.json { try views.queue() } }
        router.get("/api/cache.json") { _, _ in try views.json { try views.cacheStats() } }
        router.get("/api/costs.json") { request, _ in
            let by = request.uri.queryParameters.get("by") ?? "job"
            guard let grouping = CostReport.Grouping(rawValue: by) else {
                throw HTTPError(.badRequest, message: "by: expected job, model, day or tag, got \(by)")
            }
            return try views.json { try context.costs(by: grouping) }
        }
        return router
    }

    /// Serves until SIGTERM or SIGINT.
    /// - Parameter onListening: called once with the bound port (the real one for port 0).
    public func run(onListening: @escaping @Sendable (Int) -> Void) async throws {
        let bound = BoundPort(options.port)
        let app = Application(
            router: router(port: { bound.value }),
            configuration: .init(address: .hostname(Self.host, port: options.port), serverName: "offpeak"),
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

/// Refuses what the dashboard does not answer: a `Host` other than its own loopback address (421),
/// a method other than GET and HEAD (405); adds the security headers to every answer.
struct GuardMiddleware<Context: RequestContext>: RouterMiddleware {
    let port: @Sendable () -> Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        var response: Response
        let port = port()
        let allowed = ["127.0.0.1:\(port)", "localhost:\(port)"]
        if !allowed.contains((request.head.authority ?? "").lowercased()) {
            response = DashboardViews.plain(
                Hummingbird.HTTPResponse.Status.misdirectedRequest,
                "offpeak dashboard answers only http://127.0.0.1:\(port)/\n")
        } else if request.method != .get && request.method != .head {
            response = DashboardViews.plain(
                Hummingbird.HTTPResponse.Status.methodNotAllowed, "offpeak dashboard is read-only\n")
            response.headers[.allow] = "GET, HEAD"
        } else {
            do { response = try await next(request, context) } catch let error as HTTPError {
                response = DashboardViews.plain(error.status, (error.body ?? "\(error.status)") + "\n")
            }
        }
        response.headers[.contentSecurityPolicy] = DashboardServer.contentSecurityPolicy
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.cacheControl] = "no-store"
        return response
    }
}
