import HTTPTypes
import Hummingbird

/// Serves the provider APIs under a path prefix (`--path-prefix /anthropic`), as a proxy that
/// mounts a provider there does: `/anthropic/v1/messages` reaches `/v1/messages`, and a provider
/// path without the prefix is not found, so a client that drops or doubles the prefix fails as it
/// would against that proxy. The `/sim/` control routes and `/sources/` stay at the root.
struct PathPrefixResponder<Inner: HTTPResponder>: HTTPResponder {
    let prefix: String
    let inner: Inner

    func respond(to request: Request, context: Inner.Context) async throws -> Response {
        let path = request.uri.path
        if prefix.isEmpty || path.hasPrefix("/sim/") || path.hasPrefix("/sources/") {
            return try await inner.respond(to: request, context: context)
        }
        guard path.hasPrefix(prefix + "/"), let full = request.head.path else {
            return SimAPIError(.notFound, "offpeak-sim serves its API under \(prefix), not at \(path)")
                .neutralResponse(status: 404)
        }
        var head = request.head
        head.path = String(full.dropFirst(prefix.count))
        return try await inner.respond(to: Request(head: head, body: request.body), context: context)
    }
}
