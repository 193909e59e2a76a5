import Foundation
import Hummingbird

/// Gemini's `POST /v1beta/models/{model}:generateContent`, keyed by `x-goog-api-key` (or the
/// `key` query parameter), with implicit caching of the system instruction (cached tokens reported
/// inside `promptTokenCount`) and no rate-limit headers, as Google's API has none. The model is
/// named in the path, so each call is served by a value that knows it.
struct GeminiRoutes: CompletionAPI {
    /// The path's model, and the `key` query parameter if the request had one.
    var model: String
    var queryKey: String?
    /// Where a call's `cachedContent` is looked up; nil: nowhere (inside a provider batch).
    var contents: GeminiCachedContents?

    var endpoint: SimEndpoint { .generateContent }
    var cacheAPI: PromptCacheBook.API { .gemini }

    /// `:generateContent` here, under `v1beta` and `v1` (Google serves both; the SDK given a base
    /// URL asks `v1`); `:batchGenerateContent` goes to `GeminiBatchRoutes`.
    static func register(on router: Router<some RequestContext>, pipeline: CompletionPipeline) {
        let batches = GeminiBatchRoutes(state: pipeline.state)
        for version in ["/v1beta", "/v1"] {
            register(version, on: router, pipeline: pipeline, batches: batches)
        }
        batches.register(on: router)
        GeminiCacheRoutes(state: pipeline.state).register(on: router)
    }

    private static func register(
        _ version: String, on router: Router<some RequestContext>, pipeline: CompletionPipeline,
        batches: GeminiBatchRoutes
    ) {
        router.post("\(version)/models/:call") { request, context in
            let call = context.parameters.get("call") ?? ""
            guard let colon = call.lastIndex(of: ":") else {
                return SimAPIError(.notFound, "Method not found: \(call)").geminiResponse()
            }
            let api = GeminiRoutes(
                model: String(call[..<colon]), queryKey: request.uri.queryParameters.get("key"),
                contents: pipeline.state.cachedContents)
            switch call[call.index(after: colon)...] {
            case "generateContent": return await pipeline.respond(to: request, api: api)
            case "batchGenerateContent": return await batches.create(request, api: api)
            default: return SimAPIError(.notFound, "Method not found: \(call)").geminiResponse()
            }
        }
    }

    func presentedKey(in headers: HTTPFields) -> String? {
        headers.value(named: "x-goog-api-key") ?? queryKey
    }

    func parse(_ body: Data) throws -> ParsedCall {
        let json = try JSONBody.decode(SimJSON.self, from: body)
        guard case .object = json else {
            throw SimAPIError(.invalidRequest, "Invalid JSON payload received. Expected an object.")
        }
        var (conversation, maxTokens, form, searches) = try GenerateContentRequest(body: json).validated()
        var cachedTokens: Int?
        if let name = GenerateContentRequest.field(json, "cachedContent")?.string {
            guard conversation.system.isEmpty else {
                throw SimAPIError(
                    .invalidRequest,
                    "CachedContent can not be used with GenerateContent request setting system_instruction, "
                        + "tools or tool_config.")
            }
            guard let entry = contents?.entry(name), entry.model == model else {
                throw SimAPIError(.notFound, "CachedContent not found (or permission denied)")
            }
            conversation.system = entry.system
            cachedTokens = entry.tokens
        }
        var call = ParsedCall(model: model, conversation: conversation, maxTokens: maxTokens, form: form)
        call.cachedTokens = cachedTokens
        // A grounded call is billed once, whatever it searched.
        if searches { call.searches = SimWebSearch.searches(for: conversation, maxUses: 1) }
        return call
    }

    func cacheablePrefix(of conversation: SimConversation) -> CacheablePrefix? {
        conversation.systemPrefix
    }

    func answerBody(for call: ParsedCall, answer: SimAnswer, billing: InputBilling, at made: Date)
        -> ByteBuffer
    {
        JSONBody.encode(
            GenerateContentResponse(
                model: call.model, answer: answer, billing: billing, id: randomHex(), searches: call.searches)
        )
    }

    func errorResponse(_ error: SimAPIError) -> Response {
        error.geminiResponse()
    }

    func inputTokensForLimits(_ call: ParsedCall, cacheRead: Int) -> Int {
        call.conversation.inputTokens
    }

    func limitHeaders(_ report: RateLimitReport, at wallNow: Date) -> [(name: String, value: String)] {
        []
    }
}
