import Foundation

/// One chat message.
public struct ChatMessage: Sendable, Equatable, Codable {
    public enum Role: String, Sendable, Codable { case user, assistant }
    var role: Role
    public var content: String
    public init(role: Role, content: String) {
        self.role = role
        self.content = content
    }
}

/// A provider-neutral request: everything that changes the answer is here, and nothing else.
public struct CompletionRequest: Sendable, Equatable, Codable {
    var model: String
    var system: String?
    public var messages: [ChatMessage]
    var maxTokens: Int
    var temperature: Double?
    var topP: Double?
    var stop: [String]
    /// The job asks for its system prompt to be a cacheable prefix (Anthropic `cache_control`); it
    /// is marked only when long enough for the model to cache it (`PromptCacheMinimum`).
    var cacheSystemPrompt: Bool
    /// A batched prompt's answer asked for in the provider's structured-output form: one JSON
    /// object whose members are exactly these item ids, each a string (`StructuredAnswer`). nil:
    /// free text. Optional so requests stored before it existed still decode, and left out of the
    /// JSON when unset, so a single request's cache key is what it always was.
    var answerKeys: [String]?
    /// The form those keys are asked in; nil: the first (`json_schema`, or Anthropic's forced
    /// tool), so a structured request stored before the second form existed, and its cache key,
    /// mean what they meant. Set only with `answerKeys`.
    var answerForm: StructuredForm?
    /// The most web searches the model may run during the call, with the provider's server-side
    /// search tool (`WebSearch`); nil: no search. Left out of the JSON when unset, so a request
    /// without search keeps the cache key it always had.
    var searchUses: Int?
    /// How long the provider keeps the cached prefix (`cacheSystemPrompt`): nil, its default (five
    /// minutes at Anthropic); `.oneHour` where the prefix is reused later than that (the batch lane).
    /// Not part of the cache key: the answer is the same.
    var cacheTTL: PromptCacheTTL?

    public init(
        model: String, system: String? = nil, messages: [ChatMessage], maxTokens: Int,
        temperature: Double? = nil, topP: Double? = nil, stop: [String] = [], cacheSystemPrompt: Bool = false,
        answerKeys: [String]? = nil
    ) {
        self.model = model
        self.system = system
        self.messages = messages
        self.maxTokens = maxTokens
        self.temperature = temperature
        self.topP = topP
        self.stop = stop
        self.cacheSystemPrompt = cacheSystemPrompt
        self.answerKeys = answerKeys
    }

    /// The most a call of this request can use: its input, `maxTokens` of output, every search it
    /// may run. What a budget holds back while the call is in flight. A system prompt asked to be a
    /// cacheable prefix may be written to the provider's cache, which Anthropic bills above the
    /// input price (1.25 times for five minutes, twice for `ttl` `.oneHour`): it is counted as
    /// written, and `ModelPrice.worstDollars` prices it the dearer way.
    func worstUsage(inputTokens: Int, ttl: PromptCacheTTL?) -> Usage {
        let written = cacheSystemPrompt ? min(inputTokens, TokenEstimator.tokens(system ?? "")) : 0
        return Usage(
            input: inputTokens - written, output: maxTokens, cacheWrite: written,
            cacheWriteHour: ttl == .oneHour ? written : 0, searches: searchUses ?? 0)
    }

    /// The structured-output form this request asks for; nil: free text.
    var structuredForm: StructuredForm? {
        answerKeys == nil ? nil : answerForm ?? .jsonSchema
    }
}

/// Tokens of one call, by kind, normalized so that the four kinds never overlap.
///
/// Anthropic reports cache reads and writes *beside* `input_tokens`; OpenAI reports `cached_tokens`
/// *inside* `prompt_tokens`. Both are mapped here to: `input` = uncached input billed at the base
/// rate, `cacheRead`, `cacheWrite`, `output`.
struct Usage: Sendable, Equatable, Codable {
    var input: Int
    var output: Int
    var cacheRead: Int
    var cacheWrite: Int
    /// The part of `cacheWrite` written to last an hour (Anthropic's 1-hour cache, billed at twice
    /// the input price, where a 5-minute write is 1.25 times it).
    var cacheWriteHour: Int
    /// Web searches the provider ran for the call (`WebSearch`), billed per search.
    var searches: Int

    init(
        input: Int = 0, output: Int = 0, cacheRead: Int = 0, cacheWrite: Int = 0, cacheWriteHour: Int = 0,
        searches: Int = 0
    ) {
        self.input = input
        self.output = output
        self.cacheRead = cacheRead
        self.cacheWrite = cacheWrite
        self.cacheWriteHour = cacheWriteHour
        self.searches = searches
    }

    enum CodingKeys: String, CodingKey { case input, output, cacheRead, cacheWrite, cacheWriteHour, searches }

    /// Usage stored before the 1-hour cache existed has no `cacheWriteHour`: none of its writes were.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        input = try container.decode(Int.self, forKey: .input)
        output = try container.decode(Int.self, forKey: .output)
        cacheRead = try container.decode(Int.self, forKey: .cacheRead)
        cacheWrite = try container.decode(Int.self, forKey: .cacheWrite)
        cacheWriteHour = try container.decodeIfPresent(Int.self, forKey: .cacheWriteHour) ?? 0
        searches = try container.decode(Int.self, forKey: .searches)
    }

    /// Every input token, cached or not.
    var totalInput: Int { input + cacheRead + cacheWrite }

    static func + (lhs: Usage, rhs: Usage) -> Usage {
        Usage(
            input: lhs.input + rhs.input, output: lhs.output + rhs.output,
            cacheRead: lhs.cacheRead + rhs.cacheRead, cacheWrite: lhs.cacheWrite + rhs.cacheWrite,
            cacheWriteHour: lhs.cacheWriteHour + rhs.cacheWriteHour, searches: lhs.searches + rhs.searches)
    }
}

/// How long a provider keeps a cached prompt prefix: Anthropic's `cache_control.ttl`.
enum PromptCacheTTL: String, Sendable, Codable {
    case fiveMinutes = "5m"
    case oneHour = "1h"

    /// The TTL of the prefixes of a provider batch's `requests`, as the job asks (`asked`; nil:
    /// auto). Auto takes the hour for a batch where a marked prefix is sent more than once: the
    /// provider answers a batch's requests over hours, so later ones would find a 5-minute cache
    /// gone and write it again (at 1.25 times the input price each time); the hour is written once,
    /// at twice the input price, and read at a tenth. A prefix sent once gets the five minutes.
    static func forBatch(_ requests: [CompletionRequest], asked: PromptCacheTTL?) -> PromptCacheTTL? {
        if let asked { return asked }
        var seen = Set<String>()
        for request in requests where request.cacheSystemPrompt {
            guard let system = request.system else { continue }
            if !seen.insert(request.model + "\u{0}" + system).inserted { return .oneHour }
        }
        return nil
    }

    /// The longest TTL a provider batch of a job asking `asked` may take (`forBatch` decides once
    /// the batch is made): what a budget reserves a batch's calls at.
    static func mostForBatch(asked: PromptCacheTTL?) -> PromptCacheTTL { asked ?? .oneHour }
}

/// Why the model stopped.
enum FinishReason: String, Sendable, Codable {
    /// A natural end or a stop sequence.
    case stop
    /// `max_tokens` cut the answer (`stop_reason: max_tokens`, `finish_reason: length`).
    case length
    /// Anything else the provider said (`content_filter`, `refusal`, `tool_use`, ...).
    case other
}

/// A provider's answer to one `CompletionRequest`.
struct CompletionResponse: Sendable, Equatable, Codable {
    var text: String
    var finishReason: FinishReason
    var usage: Usage
    /// The model that answered, as the provider names it.
    var model: String
    /// The provider's id for the call (`msg_...`, `chatcmpl-...`).
    var id: String?
    /// The provider sent no usage (some local servers don't): `usage` is our estimate.
    var usageEstimated: Bool
    /// The web search results the answer cites (`WebSearch`), each URL once.
    var citations: [SearchCitation] = []
    /// The tier the provider says answered (OpenAI's `service_tier`: `default`, `flex`, …), which
    /// it bills by (`CallLane.billed(asReported:)`); nil when it names none.
    var serviceTier: String?

    init(
        text: String, finishReason: FinishReason, usage: Usage, model: String, id: String? = nil,
        usageEstimated: Bool = false
    ) {
        self.text = text
        self.finishReason = finishReason
        self.usage = usage
        self.model = model
        self.id = id
        self.usageEstimated = usageEstimated
    }

    /// The answer with what the server wrote (text, model, id) passed through `redactor`.
    func redacted(by redactor: Redactor) -> CompletionResponse {
        var answer = self
        answer.text = redactor.redact(text)
        answer.model = redactor.redact(model)
        answer.id = id.map(redactor.redact)
        answer.citations = citations.map { $0.redacted(by: redactor) }
        return answer
    }
}

/// Something that answers completion requests. Implementations are blocking and thread-safe.
protocol CompletionProvider: Sendable {
    var kind: ProviderKind { get }
    /// Where calls go; a loopback address needs no network interface.
    var baseURL: String { get }
    /// Sends one request, retrying as `RetryPolicy` says.
    /// - Throws: `ProviderError` once retries are used up or the error is not retryable.
    func complete(_ request: CompletionRequest) throws -> CompletionResponse
    /// Sends one request as `complete(_:)` does, and never throws: the answer or the failure
    /// comes back with what the provider's headers said about its rate limits.
    /// - Parameters:
    ///   - timeout: seconds each attempt may take, for this call only (a long answer from a slow
    ///     model, a flex call); nil: the configured `http.timeout`.
    ///   - lane: `live`, or `flex` where the provider's capabilities offer it (never `batch`: a
    ///     batch goes through `batches`).
    ///
    /// Neither is part of the request: they never change the answer, so never a cache key.
    func call(_ request: CompletionRequest, timeout: TimeInterval?, lane: CallLane) -> CallReply
    /// What this provider's answers and errors are cleaned with; research sources fetched for its
    /// calls go through the same one, so the same keys are hidden everywhere.
    var redactor: Redactor { get }
    /// The provider's batch API (`BatchAPI`), or nil when it has none.
    var batches: (any BatchAPI)? { get }
}

extension CompletionProvider {
    /// The keys of this process's environment and every credential shape.
    var redactor: Redactor { Redactor(environment: ProcessInfo.processInfo.environment) }
}
