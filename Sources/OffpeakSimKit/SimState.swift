/// The state every request shares: counters, the prompt cache, the fault queue, the damage
/// generator, the latency draws and the rate limiter.
///
/// Each part guards itself with a `Mutex`, so concurrent requests never see a half update.
struct SimState: Sendable {
    let options: SimOptions
    let composer: AnswerComposer
    let faults: FaultInjector
    let damager: BatchDamager
    let cacheBook: PromptCacheBook
    let stats: SimStats
    let load: LoadCounters
    let latency: LatencySampler
    let limiter: RateLimiter
    let sources: SourceLibrary
    let shutdown: ShutdownNotice

    init(options: SimOptions) {
        self.options = options
        self.composer = AnswerComposer(
            summarizer: ExtractiveSummarizer(budgetTokens: options.summaryTokens),
            answerTokens: options.answerTokens)
        let seed = options.seed ?? UInt64.random(in: .min ... .max)
        self.faults = FaultInjector(rates: options.faultRates, seed: seed)
        self.damager = BatchDamager(policy: options.damage, seed: seed)
        self.cacheBook = PromptCacheBook(
            minTokens: options.cacheMinTokens, ttl: .milliseconds(Int64(options.cacheTTLSeconds * 1000)))
        self.stats = SimStats()
        self.load = LoadCounters()
        self.latency = LatencySampler(model: options.latency, seed: seed)
        self.limiter = RateLimiter(limits: options.rateLimits)
        self.sources = SourceLibrary()
        self.shutdown = ShutdownNotice()
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
        sources.reset()
    }
}
