import Foundation

/// `POST /v1beta/models/{model}:generateContent` request, read as Google's servers read it:
/// lowerCamelCase or snake_case field names alike (proto3 JSON), unknown fields ignored.
struct GenerateContentRequest: Sendable {
    /// Gemini's output limit when a request gives none, as 2.5 models apply it.
    static let defaultMaxTokens = 65_536

    var body: SimJSON

    /// A field by its lowerCamelCase name, or its snake_case one.
    static func field(_ object: SimJSON?, _ camel: String) -> SimJSON? {
        guard let object else { return nil }
        if let value = object[camel] { return value }
        let snake = camel.reduce(into: "") { text, character in
            text += character.isUppercase ? "_" + character.lowercased() : String(character)
        }
        return object[snake]
    }

    /// The texts of a content's parts.
    private static func texts(_ content: SimJSON?) -> [String] {
        guard case .array(let parts)? = field(content, "parts") else { return [] }
        return parts.compactMap { $0["text"]?.string }
    }

    /// - Throws: `SimAPIError` for what the API would refuse.
    func validated() throws -> (
        conversation: SimConversation, maxTokens: Int, form: AnswerForm, searches: Bool
    ) {
        guard case .array(let contents)? = Self.field(body, "contents"), !contents.isEmpty else {
            throw SimAPIError(.invalidRequest, "* GenerateContentRequest.contents: contents is not specified")
        }
        var messages: [SimConversation.Message] = []
        for (index, content) in contents.enumerated() {
            let role = Self.field(content, "role")?.string ?? "user"
            guard role == "user" || role == "model" else {
                throw SimAPIError(
                    .invalidRequest,
                    "* GenerateContentRequest.contents[\(index)].role: Please use a valid role: user, model.")
            }
            messages.append(.init(role: role == "model" ? "assistant" : "user", texts: Self.texts(content)))
        }
        let system = Self.texts(Self.field(body, "systemInstruction")).map {
            SimConversation.SystemBlock(text: $0)
        }
        let config = Self.field(body, "generationConfig")
        let maxTokens = Self.field(config, "maxOutputTokens")?.int ?? Self.defaultMaxTokens
        guard maxTokens >= 1 else {
            throw SimAPIError(
                .invalidRequest,
                "* GenerateContentRequest.generation_config.max_output_tokens: must be positive")
        }
        var form = AnswerForm.text
        if Self.field(config, "responseMimeType")?.string == "application/json" {
            if let schema = Self.field(config, "responseSchema") {
                var required: [String] = []
                if case .array(let names)? = schema["required"] { required = names.compactMap(\.string) }
                form = .schema(required: required)
            } else {
                form = .jsonObject
            }
        }
        var searches = false
        if case .array(let tools)? = Self.field(body, "tools") {
            searches = tools.contains { Self.field($0, "googleSearch") != nil }
        }
        return (SimConversation(system: system, messages: messages), maxTokens, form, searches)
    }
}

/// The answer, in the shape Google's `google-genai` SDK parses.
struct GenerateContentResponse: Encodable, Sendable {
    struct Part: Encodable, Sendable { var text: String }
    struct Content: Encodable, Sendable {
        var parts: [Part]
        var role = "model"
    }
    struct Candidate: Encodable, Sendable {
        var content: Content
        var finishReason: String
        var index = 0
        /// What a grounded call searched and the pages it rests on.
        var groundingMetadata: Grounding?
    }
    struct Grounding: Encodable, Sendable {
        struct Chunk: Encodable, Sendable {
            struct Web: Encodable, Sendable {
                var uri: String
                var title: String
            }
            var web: Web
        }
        var webSearchQueries: [String]
        var groundingChunks: [Chunk]
    }
    struct Usage: Encodable, Sendable {
        var promptTokenCount: Int
        var candidatesTokenCount: Int
        var totalTokenCount: Int
        /// Left out when nothing came from the cache, as the API does.
        var cachedContentTokenCount: Int?
    }

    var candidates: [Candidate]
    var usageMetadata: Usage
    var modelVersion: String
    var responseId: String

    /// Gemini counts cached tokens inside `promptTokenCount`, as OpenAI does.
    /// - Parameter searches: a grounded call's searches: their first results are its chunks.
    init(
        model: String, answer: SimAnswer, billing: InputBilling, id: String,
        searches: [SimWebSearch.Search] = []
    ) {
        var candidate = Candidate(
            content: Content(parts: [Part(text: answer.text)]),
            finishReason: answer.hitMaxTokens ? "MAX_TOKENS" : "STOP")
        if !searches.isEmpty {
            candidate.groundingMetadata = Grounding(
                webSearchQueries: searches.map(\.query),
                groundingChunks: searches.compactMap(\.results.first).map {
                    .init(web: .init(uri: $0.url, title: $0.title))
                })
        }
        candidates = [candidate]
        usageMetadata = Usage(
            promptTokenCount: billing.total, candidatesTokenCount: answer.outputTokens,
            totalTokenCount: billing.total + answer.outputTokens,
            cachedContentTokenCount: billing.cacheRead > 0 ? billing.cacheRead : nil)
        modelVersion = model
        responseId = id
    }
}

/// Gemini's error body: `{"error": {"code", "message", "status", "details"}}`.
struct GeminiErrorBody: Encodable, Sendable {
    struct Detail: Encodable, Sendable {
        var type: String
        var retryDelay: String?
        var reason: String?

        enum CodingKeys: String, CodingKey {
            case type = "@type"
            case retryDelay, reason
        }
    }
    struct Error: Encodable, Sendable {
        var code: Int
        var message: String
        var status: String
        var details: [Detail]?
    }
    var error: Error
}
