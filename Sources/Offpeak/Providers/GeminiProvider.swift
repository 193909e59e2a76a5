import Foundation
import Logging

/// Completions through Google's Gemini API (`POST {base}/v1beta/models/{model}:generateContent`).
///
/// The request is written in the API's own lowerCamelCase (`systemInstruction`,
/// `generationConfig`), which every server imitating it reads; the answer's `usageMetadata`
/// counts cached tokens inside `promptTokenCount` (as OpenAI does) and bills a thinking model's
/// `thoughtsTokenCount` as output.
struct GeminiProvider: HTTPProvider, CustomStringConvertible {
    static let defaultBaseURL = "https://generativelanguage.googleapis.com"
    /// The API version the shapes below follow; the base URL is without it, as `GEMINI_BASE_URL` is.
    static let apiVersion = "v1beta"

    var kind: ProviderKind { .gemini }
    let baseURL: String
    private let apiKey: String
    let transport: ProviderTransport
    /// The explicit context caches this provider made (`GeminiProvider+ContextCache`).
    let contextCaches = GeminiContextCaches()

    /// - Parameters:
    ///   - apiKey: sent as `x-goog-api-key`; never logged or printed.
    ///   - baseURL: without the API version; `nil` means the public API.
    init(
        apiKey: String, baseURL: String? = nil, options: ProviderOptions = ProviderOptions(), logger: Logger
    ) {
        self.apiKey = apiKey
        self.baseURL = baseURL ?? Self.defaultBaseURL
        self.transport = ProviderTransport(options: options, logger: logger)
    }

    /// Names the endpoint, never the key.
    var description: String { "GeminiProvider(\(baseURL))" }

    /// The models collection; each call goes to its model's `:generateContent`.
    var endpoint: String { ProviderTransport.endpoint(baseURL, "/\(Self.apiVersion)/models") }

    func endpoint(for request: CompletionRequest) -> String {
        endpoint + "/" + Self.modelPath(request.model) + ":generateContent"
    }

    /// `gemini-2.5-flash` or `models/gemini-2.5-flash`, as a path segment under `models/`.
    static func modelPath(_ model: String) -> String {
        let name = model.hasPrefix("models/") ? String(model.dropFirst("models/".count)) : model
        return name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/", ":"]))
            ?? name
    }

    /// Batch Mode, over the same transport, key and base URL as live calls.
    var batches: (any BatchAPI)? {
        GeminiBatches(baseURL: baseURL, exchange: BatchExchange(transport: transport, headers: headers))
    }

    var headers: [(name: String, value: String)] {
        [(name: "x-goog-api-key", value: apiKey), (name: "content-type", value: "application/json")]
    }

    /// The JSON body of a `generateContent` call: the system prompt as `systemInstruction`, each
    /// message as a content (`assistant` is the API's `model`), the limits in `generationConfig`,
    /// and a batched prompt's shape as `responseSchema` (`responseMimeType: application/json`).
    static func requestBody(for request: CompletionRequest) throws(ProviderError) -> Data {
        try requestBody(for: request, cachedContent: nil)
    }

    /// The body, naming `cachedContent` in place of the system prompt when one holds it.
    static func requestBody(for request: CompletionRequest, cachedContent: String?) throws(ProviderError)
        -> Data
    {
        var config = GenerateRequest.Config(
            maxOutputTokens: request.maxTokens, temperature: request.temperature, topP: request.topP,
            stopSequences: request.stop.isEmpty ? nil : request.stop)
        if let keys = request.answerKeys {
            config.responseMimeType = "application/json"
            if request.structuredForm != .jsonObject { config.responseSchema = responseSchema(keys: keys) }
        }
        let system = request.system.flatMap {
            $0.isEmpty || cachedContent != nil ? nil : GenerateRequest.Content(parts: [.init(text: $0)])
        }
        let body = GenerateRequest(
            contents: request.messages.map {
                GenerateRequest.Content(
                    role: $0.role == .assistant ? "model" : "user", parts: [.init(text: $0.content)])
            },
            systemInstruction: system, generationConfig: config,
            tools: request.searchUses == nil ? nil : [.object(["googleSearch": .object([:])])],
            cachedContent: cachedContent)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(body)
        } catch {
            throw .badResponse("request could not be encoded: \(error)")
        }
    }

    /// Gemini's schema form (an OpenAPI subset, types in capitals): an object whose properties,
    /// all required and in the prompt's order, are exactly `keys`, each a string.
    static func responseSchema(keys: [String]) -> JSONValue {
        .object([
            "type": .string("OBJECT"),
            "properties": .object(
                Dictionary(keys.map { ($0, .object(["type": .string("STRING")])) }) { first, _ in first }),
            "required": .array(keys.map(JSONValue.string)),
            "propertyOrdering": .array(keys.map(JSONValue.string)),
        ])
    }

    /// Reads a 2xx `generateContent` answer into a `CompletionResponse`, normalizing usage: the
    /// uncached input is `promptTokenCount` less `cachedContentTokenCount`; output is the
    /// candidates' tokens and the thoughts' (both billed at the output price).
    static func parseResponse(_ body: Data, for request: CompletionRequest, redactor: Redactor)
        throws(ProviderError) -> CompletionResponse
    {
        let answer = try ProviderTransport.decode(GenerateResponse.self, from: body, redactor: redactor)
        guard let candidate = answer.candidates?.first else {
            // A prompt refused before any candidate (`promptFeedback.blockReason`).
            let why =
                answer.promptFeedback?.blockReason.map { "prompt blocked: \($0)" }
                ?? "answer has no `candidates`"
            throw .badResponse(why)
        }
        let text = (candidate.content?.parts ?? []).filter { $0.thought != true }.compactMap(\.text).joined()
        let finish: FinishReason
        switch candidate.finishReason {
        case "STOP", nil: finish = .stop
        case "MAX_TOKENS": finish = .length
        default: finish = .other
        }
        var usage = ProviderTransport.estimatedUsage(for: request, text: text)
        var estimated = true
        if let reported = answer.usageMetadata,
            reported.promptTokenCount != nil || reported.candidatesTokenCount != nil
        {
            let prompt = reported.promptTokenCount ?? 0
            let cached = min(prompt, reported.cachedContentTokenCount ?? 0)
            usage = Usage(
                input: prompt - cached,
                output: (reported.candidatesTokenCount ?? 0) + (reported.thoughtsTokenCount ?? 0),
                cacheRead: cached)
            estimated = false
        }
        let grounding = candidate.groundingMetadata
        if request.searchUses != nil, !(grounding?.webSearchQueries ?? []).isEmpty {
            usage.searches = 1  // a grounded prompt is billed once, whatever it searched
        }
        var response = CompletionResponse(
            text: text, finishReason: finish, usage: usage, model: answer.modelVersion ?? request.model,
            id: answer.responseId, usageEstimated: estimated)
        response.citations = SearchCitation.distinct(
            (grounding?.groundingChunks ?? []).compactMap { chunk in
                chunk.web.map { SearchCitation(url: $0.uri, title: $0.title) }
            })
        return response
    }
}

/// The wire shapes, in the API's lowerCamelCase.
extension GeminiProvider {
    struct GenerateRequest: Encodable {
        struct Part: Encodable { var text: String }
        struct Content: Encodable {
            var role: String?
            var parts: [Part]
        }
        struct Config: Encodable {
            var maxOutputTokens: Int
            var temperature: Double?
            var topP: Double?
            var stopSequences: [String]?
            var responseMimeType: String?
            /// A batched prompt's answer schema (`responseSchema(keys:)`).
            var responseSchema: JSONValue?
        }

        var contents: [Content]
        var systemInstruction: Content?
        var generationConfig: Config
        /// `googleSearch` when the call may search the web (`WebSearch`).
        var tools: [JSONValue]?
        /// The explicit context cache holding the system prompt (`GeminiContextCaches`).
        var cachedContent: String?
    }

    struct GenerateResponse: Decodable {
        struct Candidate: Decodable {
            struct Content: Decodable {
                struct Part: Decodable {
                    var text: String?
                    /// A thinking model's thought summary, not the answer.
                    var thought: Bool?
                }
                var parts: [Part]?
            }
            struct Grounding: Decodable {
                struct Chunk: Decodable {
                    struct Web: Decodable {
                        var uri: String
                        var title: String?
                    }
                    var web: Web?
                }
                var webSearchQueries: [String]?
                var groundingChunks: [Chunk]?
            }
            var content: Content?
            var finishReason: String?
            var groundingMetadata: Grounding?
        }
        struct Usage: Decodable {
            var promptTokenCount: Int?
            var candidatesTokenCount: Int?
            var cachedContentTokenCount: Int?
            var thoughtsTokenCount: Int?
        }
        struct Feedback: Decodable { var blockReason: String? }

        var candidates: [Candidate]?
        var usageMetadata: Usage?
        var modelVersion: String?
        var responseId: String?
        var promptFeedback: Feedback?
    }
}
