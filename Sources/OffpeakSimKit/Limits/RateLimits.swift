/// The per-minute limits the sim enforces on each API endpoint, from `--rpm`, `--input-tpm`,
/// `--output-tpm` and `--tpm`; nil means no limit of that kind (and no headers for it).
///
/// The kinds are the ones the real services publish: Anthropic limits requests, input tokens
/// (ITPM) and output tokens (OTPM) separately; OpenAI limits requests and tokens (TPM, input and
/// output together). Every limit set here is enforced on both endpoints, each endpoint with its
/// own buckets, as two providers would have.
public struct RateLimits: Sendable, Equatable {
    public var requestsPerMinute: Int?
    public var inputTokensPerMinute: Int?
    public var outputTokensPerMinute: Int?
    /// Input and output tokens together.
    public var tokensPerMinute: Int?

    public static let none = RateLimits()

    public init(
        requestsPerMinute: Int? = nil, inputTokensPerMinute: Int? = nil, outputTokensPerMinute: Int? = nil,
        tokensPerMinute: Int? = nil
    ) {
        self.requestsPerMinute = requestsPerMinute
        self.inputTokensPerMinute = inputTokensPerMinute
        self.outputTokensPerMinute = outputTokensPerMinute
        self.tokensPerMinute = tokensPerMinute
    }

    /// The limit of one kind, nil when it is not set.
    func perMinute(_ kind: RateLimitKind) -> Int? {
        switch kind {
        case .requests: return requestsPerMinute
        case .inputTokens: return inputTokensPerMinute
        case .outputTokens: return outputTokensPerMinute
        case .tokens: return tokensPerMinute
        }
    }

    /// True when no limit is set: the sim answers as fast as it can and sends no limit headers.
    public var isEmpty: Bool { RateLimitKind.allCases.allSatisfy { perMinute($0) == nil } }
}

/// One kind of per-minute limit, named as `/sim/stats` and the error messages name it.
public enum RateLimitKind: String, CaseIterable, Sendable, Codable {
    case requests
    case inputTokens = "input_tokens"
    case outputTokens = "output_tokens"
    case tokens

    /// The `offpeak-sim` flag that sets the limit.
    var flag: String {
        switch self {
        case .requests: return "--rpm"
        case .inputTokens: return "--input-tpm"
        case .outputTokens: return "--output-tpm"
        case .tokens: return "--tpm"
        }
    }

    /// How the kind reads in an error message: "50 requests per minute".
    var unit: String {
        switch self {
        case .requests: return "requests"
        case .inputTokens: return "input tokens"
        case .outputTokens: return "output tokens"
        case .tokens: return "tokens"
        }
    }
}
