import Hummingbird

/// An error answer of an API endpoint: what kind of failure, and a message for the person
/// reading the client's log. Each API renders it in its own shape and status.
struct SimAPIError: Error, Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case invalidRequest
        case authentication
        case notFound
        case tooLarge
        case rateLimited
        case server
        case badGateway
        case overloaded
        /// A flex call refused for capacity (OpenAI's 429 `resource_unavailable`).
        case resourceUnavailable
        /// The account is out of money (`SimFault.quotaSpent`).
        case quotaSpent
        /// A field the API does not know: Mistral's 422 (`extra_forbidden`); the other APIs' 400.
        case unknownField
    }

    /// The message a spent account's fault carries; each API answers in its own words (`message(anthropic:)`).
    static let quotaMessage = "offpeak-sim: simulated spent account (fault quota)"

    /// The message as `api` words it: a spent account's is each provider's own sentence, which
    /// clients recognise it by.
    func message(anthropic: Bool) -> String {
        guard kind == .quotaSpent else { return message }
        return anthropic
            ? "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to "
                + "upgrade or purchase credits."
            : "You exceeded your current quota, please check your plan and billing details. For more "
                + "information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors."
    }

    var kind: Kind
    var message: String
    /// Seconds for the `retry-after` header of a 429.
    var retryAfter: Int?
    /// For a 429 of the rate limiter, the limit that refused the call; OpenAI's `error.type`
    /// names it (`requests` or `tokens`).
    var limit: RateLimitKind?

    init(_ kind: Kind, _ message: String, retryAfter: Int? = nil, limit: RateLimitKind? = nil) {
        self.kind = kind
        self.message = message
        self.retryAfter = retryAfter
        self.limit = limit
    }

    /// The Anthropic Messages API's status and `error.type` for this kind.
    var anthropic: (status: Int, type: String) {
        switch kind {
        case .invalidRequest: return (400, "invalid_request_error")
        case .authentication: return (401, "authentication_error")
        case .notFound: return (404, "not_found_error")
        case .tooLarge: return (413, "request_too_large")
        case .rateLimited: return (429, "rate_limit_error")
        case .server: return (500, "api_error")
        case .badGateway: return (502, "api_error")
        case .overloaded: return (529, "overloaded_error")
        case .resourceUnavailable: return (429, "rate_limit_error")
        case .quotaSpent, .unknownField: return (400, "invalid_request_error")
        }
    }

    /// OpenAI's status, `error.type` and `error.code`; it has no 529 and says 503 instead.
    var openAI: (status: Int, type: String, code: String?) {
        switch kind {
        case .invalidRequest: return (400, "invalid_request_error", nil)
        case .authentication: return (401, "invalid_request_error", "invalid_api_key")
        case .notFound: return (404, "invalid_request_error", "not_found")
        case .tooLarge: return (413, "invalid_request_error", "request_too_large")
        case .rateLimited:
            let type = limit == nil || limit == .requests ? "requests" : "tokens"
            return (429, type, "rate_limit_exceeded")
        case .server: return (500, "server_error", nil)
        case .badGateway: return (502, "server_error", nil)
        case .overloaded: return (503, "server_error", "service_unavailable")
        case .resourceUnavailable: return (429, "rate_limit_error", "resource_unavailable")
        case .quotaSpent: return (429, "insufficient_quota", "insufficient_quota")
        case .unknownField: return (400, "invalid_request_error", nil)
        }
    }

    func anthropicResponse() -> Response {
        let (status, type) = anthropic
        let body = AnthropicErrorBody(error: .init(type: type, message: message(anthropic: true)))
        return jsonResponse(status: status, body: JSONBody.encode(body))
    }

    func openAIResponse() -> Response {
        let (status, type, code) = openAI
        let body = OpenAIErrorBody(
            error: .init(message: message(anthropic: false), type: type, code: Nullable(code)))
        return jsonResponse(status: status, body: JSONBody.encode(body))
    }

    /// Gemini's status and `error.status`. A wrong key is a 400 `INVALID_ARGUMENT` there (reason
    /// `API_KEY_INVALID`), not a 401; a rate limit says when to come back in a `RetryInfo` detail,
    /// not in `retry-after`.
    var gemini: (status: Int, name: String) {
        switch kind {
        case .invalidRequest, .authentication, .tooLarge, .unknownField: return (400, "INVALID_ARGUMENT")
        case .notFound: return (404, "NOT_FOUND")
        case .rateLimited, .resourceUnavailable, .quotaSpent: return (429, "RESOURCE_EXHAUSTED")
        case .server: return (500, "INTERNAL")
        case .badGateway: return (502, "UNAVAILABLE")
        case .overloaded: return (503, "UNAVAILABLE")
        }
    }

    func geminiResponse() -> Response {
        let (status, name) = gemini
        var details: [GeminiErrorBody.Detail]?
        if kind == .authentication {
            details = [.init(type: "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID")]
        } else if let retryAfter {
            details = [.init(type: "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "\(retryAfter)s")]
        }
        let body = GeminiErrorBody(
            error: .init(code: status, message: message, status: name, details: details))
        return Response(
            status: Self.status(status), headers: [.contentType: "application/json"],
            body: .init(byteBuffer: JSONBody.encode(body)))
    }

    /// Mistral's error: OpenAI's status, but a 422 for a field it does not know, and the message
    /// at the top of the body (`{"object": "error", "message", "type", "param", "code"}`).
    func mistralResponse() -> Response {
        let (status, type, code) = openAI
        let body = MistralErrorBody(message: message(anthropic: false), type: type, code: Nullable(code))
        return jsonResponse(status: kind == .unknownField ? 422 : status, body: JSONBody.encode(body))
    }

    /// For answers outside both APIs (unknown routes, control endpoints): one body that both
    /// SDKs can read, Anthropic's `type` and OpenAI's `param`/`code` side by side.
    func neutralResponse(status: Int) -> Response {
        let body = NeutralErrorBody(error: .init(type: anthropic.type, message: message, code: openAI.code))
        return jsonResponse(status: status, body: JSONBody.encode(body))
    }

    private func jsonResponse(status: Int, body: ByteBuffer) -> Response {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let retryAfter {
            headers[.retryAfter] = String(retryAfter)
        }
        return Response(status: Self.status(status), headers: headers, body: .init(byteBuffer: body))
    }
}

extension SimAPIError {
    /// A status with its usual reason phrase; swift-http-types leaves the phrase empty otherwise.
    static func status(_ code: Int) -> HTTPResponse.Status {
        let phrases = [
            400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 405: "Method Not Allowed",
            413: "Content Too Large", 429: "Too Many Requests", 500: "Internal Server Error",
            502: "Bad Gateway", 503: "Service Unavailable", 529: "Overloaded",
        ]
        return HTTPResponse.Status(code: code, reasonPhrase: phrases[code] ?? "")
    }
}

private struct AnthropicErrorBody: Encodable {
    struct Detail: Encodable {
        var type: String
        var message: String
    }
    var type = "error"
    var error: Detail
}

private struct OpenAIErrorBody: Encodable {
    struct Detail: Encodable {
        var message: String
        var type: String
        var param = Nullable<String>.null
        var code: Nullable<String>
    }
    var error: Detail
}

private struct MistralErrorBody: Encodable {
    var object = "error"
    var message: String
    var type: String
    var param = Nullable<String>.null
    var code: Nullable<String>
}

private struct NeutralErrorBody: Encodable {
    struct Detail: Encodable {
        var type: String
        var message: String
        var param = Nullable<String>.null
        var code: String?
    }
    var type = "error"
    var error: Detail
}
