import Foundation

/// Everything `offpeak-sim` can be told at start; the defaults are the command's defaults.
public struct SimOptions: Sendable, Equatable {
    /// Loopback by default: the sim is for tests and demos on this machine.
    public var host = "127.0.0.1"
    /// 0 asks the system for a free port; the bound one is reported when listening.
    public var port = 8089
    /// About how long a document summary may be, in tokens.
    public var summaryTokens = 60
    /// How many tokens of the prompt's first sentence a plain answer repeats, at most.
    public var answerTokens = AnswerComposer.defaultAnswerTokens
    /// Prompt prefixes shorter than this are never cached (OpenAI's 1024-token minimum); on the
    /// Anthropic endpoint it applies to models Anthropic's table does not list (`ClaudeCacheMinimum`).
    public var cacheMinTokens = 1024
    /// How long a cached prefix lives after its last use, in seconds.
    public var cacheTTLSeconds = 300.0
    /// Fixed delay before every answer, in milliseconds.
    public var latencyMs = 0.0
    /// Extra delay per output token, in milliseconds, as a model's generation speed.
    public var msPerOutputToken = 0.0
    /// In 0...1: how far each delay may stray from `latencyMs + msPerOutputToken × tokens`, as a
    /// fraction of it (see `LatencyModel`); repeatable under `seed`.
    public var jitter = 0.0
    /// Requests and tokens per minute each endpoint accepts before answering 429; none by default.
    public var rateLimits = RateLimits.none
    /// The `retry-after` header of a 429 fault, in seconds.
    public var retryAfterSeconds = 1
    /// How long a `timeout` fault waits before answering, in seconds.
    public var timeoutDelaySeconds = 30.0
    /// Seconds in the `retry-after` of a 529 fault (503 at OpenAI); nil: it has none, as Anthropic's
    /// and OpenAI's overloads mostly have not.
    public var overloadedRetryAfterSeconds: Int?
    /// Random faults per API call.
    public var faultRates = FaultRates.none
    /// How often and how batched answers are damaged; by default never.
    public var damage = DamagePolicy.none
    /// Batched prompts are answered as small models answer them (`WeakModel`), unless the request's
    /// answer form holds the shape.
    public var weakModel = false
    /// Models whose batched answers go wrong after a position (`--degrading-model`), by model
    /// name; a call to any other model, or a prompt that is not batched, is answered right.
    public var degradingModels: [String: Degradation] = [:]
    /// Whether the server takes structured-output forms (`response_format` json_schema, a forced
    /// tool); when not, it refuses them with a 400, as some servers and proxies do.
    public var structuredOutput = true
    /// Whether a server that takes structured output takes `response_format` `json_schema`; when
    /// not, it refuses that form alone, as llama-cpp-python's server does, and holds `json_object`
    /// with a `schema` to its shape.
    public var jsonSchema = true
    /// The status of a refusal: 400, or 500 as llama-cpp-python's server answers `json_schema`.
    public var structuredRefusalStatus = 400
    /// Seed of the random fault, damage and latency sequences; nil picks one at random (not
    /// repeatable).
    public var seed: UInt64?
    /// When set, every API call must present this key: `x-api-key` on the Anthropic endpoint,
    /// `Authorization: Bearer` on the OpenAI one.
    public var requireKey: String?
    /// Seconds from creating a provider batch (`/v1/messages/batches`, `/v1/batches`) until it
    /// has ended; 0 ends it on the first retrieve.
    public var batchDelaySeconds = 2.0
    /// Seconds of the provider's clock a batch's requests are answered over, in order, evenly: a real
    /// provider works through a batch over hours, so its requests meet a prompt cache written by an
    /// earlier one that long after. 0: all at the moment the batch ends. Only the prompt cache sees
    /// this clock; the batch still ends after `batchDelaySeconds`.
    public var batchSpreadSeconds = 0.0
    /// Chances, per request of a provider batch, that it ends errored, expired or canceled
    /// instead of answered; repeatable per `custom_id` under `seed`.
    public var batchErrorRate = 0.0
    public var batchExpireRate = 0.0
    public var batchCancelRate = 0.0
    /// Serves the provider APIs under this path (`/anthropic`), as a proxy that mounts them there
    /// does: `/anthropic/v1/messages`, and nothing at `/v1/...`. The `/sim/` control routes and
    /// research sources stay at the root. Empty: at the root.
    public var pathPrefix = ""
    /// Anthropic batches name their results as a path with no scheme or host
    /// (`/v1/messages/batches/{id}/results`, under `pathPrefix`), as some third-party servers do.
    public var relativeResultsURL = false
    /// The origin Anthropic batches' `results_url` names instead of the sim's own
    /// (`https://api.anthropic.com`), as the real API does behind a proxy such as LiteLLM.
    public var resultsOrigin: String?
    /// When set, every results download (Anthropic `.../results`, OpenAI `/v1/files/{id}/content`)
    /// answers this status, 400-599, with an error body: results that cannot be fetched.
    public var resultsStatus: Int?
    /// Chance, in 0...1, that a flex call (`service_tier: "flex"` on chat completions) is refused
    /// for capacity: a 429 `resource_unavailable`, not billed (`FlexGate`).
    public var flexRefuseRate = 0.0
    /// Chance, in 0...1, that a flex call taken is answered at the default tier instead (its
    /// response says `service_tier: "default"`, billed at the live prices), as OpenAI answers a
    /// project whose flex requests it serves at the default tier.
    public var flexAsDefaultRate = 0.0
    /// How many times longer a flex call takes than a live one.
    public var flexSlowdown = 3.0
    /// When set, the server exits at once, as a crash or `kill -9` would (no answer, connections
    /// reset), when API call number `crashAfterCalls + 1` arrives.
    public var crashAfterCalls: Int?
    /// Seconds the sim's clock runs ahead of the machine's (behind, when negative): the time its
    /// answers say they were made (`created`) and the hours DeepSeek's prices are read at
    /// (`DeepSeekHours`), so a test can put the sim at 05:59 UTC and see peak prices begin.
    public var clockOffsetSeconds = 0.0
    /// swift-log level name for the server's own log on stderr.
    public var logLevel = "info"

    public init() {}

    /// The latency options as one model.
    public var latency: LatencyModel {
        LatencyModel(fixedMs: latencyMs, msPerOutputToken: msPerOutputToken, jitter: jitter)
    }

    /// - Throws: `SimConfigError.badOption` for values no server could run with.
    public func validate() throws {
        func check(_ condition: Bool, _ message: String) throws {
            if !condition { throw SimConfigError(.badOption, message) }
        }
        try check((0...65535).contains(port), "--port must be in 0...65535")
        try check(summaryTokens >= 1, "--summary-tokens must be at least 1")
        try check(answerTokens >= 1, "--answer-tokens must be at least 1")
        try check(cacheMinTokens >= 0, "--cache-min-tokens must not be negative")
        try check(cacheTTLSeconds > 0, "--cache-ttl must be positive")
        try check(latencyMs >= 0 && msPerOutputToken >= 0, "latencies must not be negative")
        try check((0...1).contains(jitter), "--jitter must be in 0...1")
        for (value, flag) in [
            (rateLimits.requestsPerMinute, "--rpm"), (rateLimits.inputTokensPerMinute, "--input-tpm"),
            (rateLimits.outputTokensPerMinute, "--output-tpm"), (rateLimits.tokensPerMinute, "--tpm"),
        ] {
            try check((value ?? 1) >= 1, "\(flag) must be at least 1")
        }
        for (name, degradation) in degradingModels.sorted(by: { $0.key < $1.key }) {
            try check(!name.isEmpty, "--degrading-model needs a model NAME before :KIND:AFTER")
            switch degradation.shape {
            case .after(let after):
                try check(after >= 1, "--degrading-model \(name): AFTER must be at least 1, got \(after)")
            case .slope(let rate):
                try check(
                    rate > 0 && rate <= 1,
                    "--degrading-model \(name): the slope's RATE must be more than 0 and at most 1 (100%), got \(rate)"
                )
            }
        }
        try check(retryAfterSeconds >= 0, "--retry-after must not be negative")
        try check(timeoutDelaySeconds >= 0, "--timeout-delay must not be negative")
        try check(batchDelaySeconds >= 0, "--batch-delay must not be negative")
        try check(batchSpreadSeconds >= 0, "--batch-spread must not be negative")
        try check((0...1).contains(flexRefuseRate), "--flex-refuse-rate must be in 0...1")
        try check((0...1).contains(flexAsDefaultRate), "--flex-as-default-rate must be in 0...1")
        try check(flexSlowdown >= 1, "--flex-slowdown must be at least 1")
        try check((crashAfterCalls ?? 0) >= 0, "--crash-after must not be negative")
        try check(
            [batchErrorRate, batchExpireRate, batchCancelRate].allSatisfy { (0...1).contains($0) }
                && batchErrorRate + batchExpireRate + batchCancelRate <= 1,
            "--batch-error-rate, --batch-expire-rate and --batch-cancel-rate must be in 0...1 and sum to at most 1"
        )
        try check(
            pathPrefix.isEmpty || (pathPrefix.hasPrefix("/") && !pathPrefix.hasSuffix("/")),
            "--path-prefix must start with / and not end with one (/anthropic)")
        try check(
            resultsOrigin.map(Self.isOrigin) ?? true,
            "--results-origin must be an origin: http or https, a host, and an optional port")
        try check(
            (resultsStatus ?? 400) >= 400 && (resultsStatus ?? 400) <= 599,
            "--results-status must be in 400...599")
        try check(
            ["trace", "debug", "info", "notice", "warning", "error", "critical"].contains(logLevel),
            "--log-level must be one of trace, debug, info, notice, warning, error, critical")
    }

    /// `scheme://host[:port]`, nothing after.
    static func isOrigin(_ text: String) -> Bool {
        guard let parts = URLComponents(string: text), let scheme = parts.scheme,
            ["http", "https"].contains(scheme), !(parts.host ?? "").isEmpty
        else { return false }
        return parts.path.isEmpty && parts.query == nil && parts.fragment == nil && parts.user == nil
    }
}
