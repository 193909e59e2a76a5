import Foundation

/// What the calls of one lane add up to: calls, tokens by kind, dollars and time. The provider's
/// prompt cache is counted as it bills: a prefix marked for it (Anthropic, offpeak-sim) is written
/// by the first call that sends it and read by every later one; OpenAI caches a long enough
/// system prompt by itself and bills no write.
struct LaneTally: Sendable {
    let provider: ProviderKind
    let price: ModelPrice?
    let lane: CallLane
    /// Whether the provider's prompt cache is counted (not for the naive way).
    var promptCache = true
    var calls = 0
    var batchedCalls = 0
    var items = 0
    var usage = Usage()
    /// Seconds the calls take one after another at the model's measured speed; nil: not measured.
    var callSeconds: Double? = 0
    var longestCall: Double = 0
    /// The batch audit's calls among `calls` (`AuditEstimate`); nil: none planned.
    var audits: AuditEstimate?
    /// Tokens of a marked prefix (Anthropic's cache) written by the first call that sends it, and
    /// read by the later ones: what a longer or shorter cache changes (`withPrefixCache`).
    private(set) var markedWrites = 0
    private(set) var markedReads = 0
    private var cachedPrefixes: Set<String> = []

    init(provider: ProviderKind, price: ModelPrice?, lane: CallLane) {
        self.provider = provider
        self.price = price
        self.lane = lane
    }

    var dollars: Double { price?.dollars(for: usage, lane: lane) ?? 0 }

    /// Counts one call sending `request` for `items` items and expected to answer `output` tokens.
    mutating func add(_ request: CompletionRequest, items: Int, output: Int, latency: LatencyEstimate?) {
        let input = TokenEstimator.inputTokens(request)
        var call = Usage(input: input, output: output)
        if promptCache, let prefix = request.system,
            let cached = PromptCacheMinimum.cachedPrefix(of: request, provider: provider)
        {
            let key = request.model + "\n" + prefix
            let seen = !cachedPrefixes.insert(key).inserted
            switch (provider.capabilities.promptCache, seen) {
            case (_, true): call = Usage(input: input - cached, output: output, cacheRead: cached)
            case (.marked, false): call = Usage(input: input - cached, output: output, cacheWrite: cached)
            case (.automatic, false): break  // written at no charge
            }
        }
        // Every search the call may run: a model runs fewer when it finds its answer sooner.
        call.searches = request.searchUses ?? 0
        calls += 1
        batchedCalls += items > 1 ? 1 : 0
        self.items += items
        usage = usage + call
        if provider.capabilities.promptCache == .marked {
            markedWrites += call.cacheWrite
            markedReads += call.cacheRead
        }
        if let latency, let known = callSeconds {
            let seconds = latency.seconds(input: input, output: output)
            callSeconds = known + seconds
            longestCall = max(longestCall, seconds)
        } else {
            callSeconds = nil
        }
    }

    /// How the tally counts the provider's cache of a marked prefix.
    enum PrefixCache {
        /// The 5-minute default, its later calls finding it (live calls, one after another).
        case fiveMinutes
        /// The 1-hour cache: written once at its price (twice the input), read after.
        case hour
        /// The 5-minute default where the calls land more than five minutes apart (a provider
        /// batch answered over hours): every call writes it again.
        case fiveMinutesApart
    }

    /// The same calls with the marked prefixes cached as `cache` says.
    func withPrefixCache(_ cache: PrefixCache) -> LaneTally {
        var tally = self
        switch cache {
        case .fiveMinutes: break
        case .hour: tally.usage.cacheWriteHour = markedWrites
        case .fiveMinutesApart:
            tally.usage.cacheRead -= markedReads
            tally.usage.cacheWrite += markedReads
        }
        return tally
    }

}
