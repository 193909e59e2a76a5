import Foundation

/// The state every request shares: counters, the prompt cache, the fault queue, the damage
/// generator, the latency draws and the rate limiter.
///
/// Each part guards itself with a `Mutex`, so concurrent requests never see a half update.
struct SimState: Sendable {
    let options: SimOptions
    let composer: AnswerComposer
    let faults: FaultInjector
    let damager: BatchDamager
    let weak: WeakModel
    let cacheBook: PromptCacheBook
    let stats: SimStats
    let load: LoadCounters
    let latency: LatencySampler
    let limiter: RateLimiter
    let sources: SourceLibrary
    let shutdown: ShutdownNotice
    /// Provider batches and their files (`/v1/messages/batches`, `/v1/batches`, `/v1/files`).
    let batches: BatchBook
    /// The seed of every random draw, picked at random when `--seed` is not given.
    let seed: UInt64
    /// Flex processing's refusals and slowdown.
    let flex: FlexGate
    /// Gemini's explicit context caches.
    let cachedContents = GeminiCachedContents()

    /// The sim's clock: the machine's, moved by `--clock-offset`.
    func now() -> Date { Date().addingTimeInterval(options.clockOffsetSeconds) }

    init(options: SimOptions) {
        self.options = options
        self.composer = AnswerComposer(
            summarizer: ExtractiveSummarizer(budgetTokens: options.summaryTokens),
            answerTokens: options.answerTokens)
        let seed = options.seed ?? UInt64.random(in: .min ... .max)
        self.seed = seed
        self.batches = BatchBook(downloadRefusal: options.resultsStatus)
        self.faults = FaultInjector(rates: options.faultRates, seed: seed)
        self.damager = BatchDamager(policy: options.damage, seed: seed)
        self.weak = WeakModel(seed: seed)
        self.cacheBook = PromptCacheBook(
            minTokens: options.cacheMinTokens, ttl: .milliseconds(Int64(options.cacheTTLSeconds * 1000)))
        self.stats = SimStats()
        self.load = LoadCounters()
        self.latency = LatencySampler(model: options.latency, seed: seed)
        self.limiter = RateLimiter(limits: options.rateLimits)
        self.sources = SourceLibrary()
        self.shutdown = ShutdownNotice()
        self.flex = FlexGate(
            refuseRate: options.flexRefuseRate, asDefaultRate: options.flexAsDefaultRate,
            slowdown: options.flexSlowdown, seed: seed)
    }

    /// `POST /sim/reset`: a fresh sim without a restart.
    func reset() {
        stats.reset()
        load.reset()
        latency.reset()
        limiter.reset()
        cacheBook.reset()
        faults.reset()
        damager.reset()
        weak.reset()
        sources.reset()
        batches.reset()
        flex.reset()
        cachedContents.reset()
    }

    /// The refusal a server without structured output (`--no-structured-output`) gives a call that
    /// asks for a shaped answer, or one without `json_schema` (`--refuse-json-schema`) a call that
    /// asks for that form; nil when it takes the call.
    func refusal(of call: ParsedCall) -> SimAPIError? {
        let refused =
            options.structuredOutput ? !options.jsonSchema && call.form.isJSONSchema : call.form != .text
        guard refused else { return nil }
        return SimAPIError(
            options.structuredRefusalStatus == 500 ? .server : .invalidRequest,
            "this server does not support structured output (response_format json_schema, tool_choice)")
    }

    /// The answer to a call, cut to its `max_tokens`; for a batched prompt, also what it adds to
    /// the batch counters. A degrading model (`--degrading-model`) gets the content of a batched
    /// answer wrong first, whatever the answer form; then a weak model or the damage policy may
    /// spoil its shape. A batched answer is damaged before the cut, as a model would write the
    /// damage, and billed for its whole (damaged) text.
    func composeAnswer(_ call: ParsedCall) -> (SimAnswer, BatchTally?) {
        let text = call.conversation.lastUserText
        let items = BatchItem.items(in: text)
        guard !items.isEmpty else {
            return (composer.cut(composer.singleAnswer(to: text), maxTokens: call.maxTokens), nil)
        }
        var whole = composer.batchAnswer(for: items)
        var degraded = 0
        if let degradation = options.degradingModels[call.model] {
            (whole, degraded) = degradation.degrade(whole, items: items, seed: seed)
        }
        // A server holding the answer to a schema or a forced tool gets the object the prompt
        // asks for, whatever the model; else a weak model spoils it, or the damage policy may.
        if call.form.holdsShape {
            return (
                composer.cut(whole.text, maxTokens: call.maxTokens),
                BatchTally(items: items.count, degraded: degraded)
            )
        }
        if options.weakModel {
            let (text, _) = weak.spoil(whole)
            return (
                composer.cut(text, maxTokens: call.maxTokens),
                BatchTally(items: items.count, degraded: degraded)
            )
        }
        let (damaged, damage) = damager.damage(whole)
        let answer = composer.cut(damaged.text, maxTokens: call.maxTokens)
        return (answer, BatchTally(items: items.count, damage: damage, degraded: degraded))
    }
}
