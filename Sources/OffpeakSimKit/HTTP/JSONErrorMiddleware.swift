import Hummingbird

/// Turns every error that escapes a route (unknown route, wrong method, body too large) into a
/// JSON error both SDKs can read, instead of Hummingbird's empty-bodied status.
struct JSONErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError {
            let code = error.status.code
            let kind: SimAPIError.Kind =
                switch code {
                case 404: .notFound
                case 413: .tooLarge
                case 400..<500: .invalidRequest
                default: .server
                }
            let message =
                code == 404
                ? "offpeak-sim has no route for \(request.method) \(request.uri.path)"
                : (error.body ?? "HTTP \(code)")
            return SimAPIError(kind, message).neutralResponse(status: code)
        } catch {
            return SimAPIError(.server, "offpeak-sim: \(error)").neutralResponse(status: 500)
        }
    }
}
