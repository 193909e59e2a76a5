import Foundation
import Hummingbird

/// Gemini's `cachedContents`: `POST /v1beta/cachedContents` (a model, a `systemInstruction`, a
/// `ttl` such as `"600s"`), `GET /v1beta/cachedContents[/{id}]`, `DELETE /v1beta/cachedContents/{id}`.
struct GeminiCacheRoutes: Sendable {
    let state: SimState

    private func http(_ request: Request) -> BatchHTTP {
        BatchHTTP(
            state: state, api: GeminiRoutes(model: "", queryKey: request.uri.queryParameters.get("key")))
    }

    func register(on router: Router<some RequestContext>) {
        router.post("/v1beta/cachedContents") { request, _ in
            let http = http(request)
            return await http.serve(request) { body in try create(body, http: http) }
        }
        router.get("/v1beta/cachedContents") { request, _ in
            let http = http(request)
            return await http.serve(request) { _ in
                http.json(["cachedContents": state.cachedContents.all().map(Self.object)])
            }
        }
        router.get("/v1beta/cachedContents/:id") { request, context in
            let http = http(request)
            return await http.serve(request) { _ in
                let name = "cachedContents/" + (context.parameters.get("id") ?? "")
                guard let entry = state.cachedContents.entry(name) else {
                    throw SimAPIError(.notFound, "CachedContent not found (or permission denied)")
                }
                return http.json(Self.object(entry))
            }
        }
        router.delete("/v1beta/cachedContents/:id") { request, context in
            let http = http(request)
            return await http.serve(request) { _ in
                guard state.cachedContents.delete("cachedContents/" + (context.parameters.get("id") ?? ""))
                else {
                    throw SimAPIError(.notFound, "CachedContent not found (or permission denied)")
                }
                return http.json([:])
            }
        }
    }

    private func create(_ body: Data, http: BatchHTTP) throws -> Response {
        let json = try JSONBody.decode(SimJSON.self, from: body)
        guard let model = GenerateContentRequest.field(json, "model")?.string, !model.isEmpty else {
            throw SimAPIError(
                .invalidRequest, "* CreateCachedContentRequest.cached_content.model: model is required")
        }
        var system: [SimConversation.SystemBlock] = []
        if case .array(let parts)? = GenerateContentRequest.field(
            GenerateContentRequest.field(json, "systemInstruction"), "parts")
        {
            system = parts.compactMap { $0["text"]?.string }.map { SimConversation.SystemBlock(text: $0) }
        }
        let tokens = system.reduce(0) { $0 + SimTokens.count($1.text) }
        guard tokens >= GeminiCachedContents.minimumTokens else {
            throw SimAPIError(
                .invalidRequest,
                "Cached content is too small. total_token_count=\(tokens), min_total_token_count="
                    + "\(GeminiCachedContents.minimumTokens)")
        }
        let ttlText = GenerateContentRequest.field(json, "ttl")?.string ?? "3600s"
        guard ttlText.hasSuffix("s"), let ttl = Double(ttlText.dropLast()), ttl > 0 else {
            throw SimAPIError(
                .invalidRequest, "* CreateCachedContentRequest.cached_content.ttl: bad duration \(ttlText)")
        }
        let name = model.hasPrefix("models/") ? String(model.dropFirst("models/".count)) : model
        let entry = state.cachedContents.create(model: name, system: system, ttl: ttl)
        return http.json(Self.object(entry))
    }

    static func object(_ entry: GeminiCachedContents.Entry) -> [String: Any] {
        [
            "name": entry.name, "model": "models/" + entry.model,
            "createTime": AnthropicBatchRoutes.timestamp(entry.created),
            "updateTime": AnthropicBatchRoutes.timestamp(entry.created),
            "expireTime": AnthropicBatchRoutes.timestamp(entry.expires),
            "usageMetadata": ["totalTokenCount": entry.tokens],
        ]
    }
}
