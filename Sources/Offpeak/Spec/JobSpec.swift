import Foundation

/// A validated job spec, read from `jobs/NAME.yaml` by `JobSpecParser`.
///
/// Every field here has been checked: a `JobSpec` value is always runnable.
public struct JobSpec: Sendable, Equatable, Codable {
    enum Kind: String, Sendable, Codable, CaseIterable {
        case summarize, research, prompt
    }

    /// A model tier; the workspace maps each to a model per provider.
    /// How a job's calls go (DESIGN.md, lever 4): `live`, one call at a time as the provider allows;
    /// `batch`, through the provider's batch API at half price, answered within 24 hours; `flex`,
    /// live calls with the provider's flex processing (OpenAI's `service_tier: "flex"`), at the
    /// batch prices, slower and sometimes refused for capacity; `auto` (the default), batch when
    /// the job's deadline is 24 h or more or `offpeak.yaml` says `lane: batch`, and the provider has
    /// a batch API; else flex when the deadline is 15 minutes or more (or `offpeak.yaml` says
    /// `lane: flex`) and the model takes it (`LaneChoice`).
    public enum Lane: String, Sendable, Codable, CaseIterable {
        case live, batch, flex, auto
    }

    /// What `prompt_cache_ttl` may say: `auto`, `5m` or `1h`.
    enum CacheTTLChoice: String, CaseIterable {
        case auto
        case fiveMinutes = "5m"
        case oneHour = "1h"

        var ttl: PromptCacheTTL? {
            switch self {
            case .auto: nil
            case .fiveMinutes: .fiveMinutes
            case .oneHour: .oneHour
            }
        }
    }

    /// When a cached answer is asked again (issue 24): `ttl`, once its `cache_ttl` has passed;
    /// `unchanged`, only when its prompt changed (with its fetched sources, byte for byte), whatever
    /// `cache_ttl` says: an item with sources changes when its sources do, and a prompt answered
    /// before has its answer. The default for `kind: research`; `ttl` for the other kinds, whose
    /// answers may change with time.
    enum Reuse: String, Sendable, Codable, CaseIterable {
        case unchanged, ttl
    }

    /// What a job with research sources does with an item whose source its site's robots.txt
    /// forbids: `fail` it (the default: the spec names a page that will never be read), or `skip`
    /// it (not asked, reported as skipped, the run still completes).
    enum Robots: String, Sendable, Codable, CaseIterable {
        case fail, skip
    }

    public enum Tier: String, Sendable, Codable, CaseIterable, Comparable {
        case fast, balanced, powerful

        /// One tier down, for battery-aware execution; `fast` stays `fast`.
        var lower: Tier {
            switch self {
            case .powerful: return .balanced
            case .balanced, .fast: return .fast
            }
        }

        public static func < (lhs: Tier, rhs: Tier) -> Bool {
            let order: [Tier] = [.fast, .balanced, .powerful]
            return (order.firstIndex(of: lhs) ?? 0) < (order.firstIndex(of: rhs) ?? 0)
        }
    }

    /// One unit of work: the variables its template is filled with.
    struct Item: Sendable, Equatable, Codable {
        /// Stable within the job: an inline item's `id` (or its 1-based position), an input file's path.
        var id: String
        /// Template variables: always `id`; `item` for string items and input files (a mapping item
        /// may leave it out); `path` and `name` for input files.
        var variables: [String: String]
        /// Research sources (http/https URLs) for this item only, from an inline item's `sources`
        /// list; they come after the job's own `sources` in the item's context.
        var sources: [String] = []
        /// This item's own `search`, in place of the job's; nil: the job's.
        var search: Search?
        /// The feed this item is an entry of (`feeds:`); nil for the spec's own items. Kept with the
        /// run, so an entry taken into a run stays in it until answered, even once it left its feed.
        var feed: String?

        init(
            id: String, variables: [String: String], sources: [String] = [], search: Search? = nil,
            feed: String? = nil
        ) {
            self.id = id
            self.variables = variables
            self.sources = sources
            self.search = search
            self.feed = feed
        }
    }

    /// `search: {queries: […], max_uses: N}` (issue 24, item 4): the item's call may search the web
    /// with the provider's server-side tool (`WebSearch`), at most `maxUses` times. The queries,
    /// filled with the item's variables, are listed at the end of its prompt as what to search for;
    /// without them the model chooses.
    struct Search: Sendable, Equatable, Codable {
        var queries: [Template] = []
        var maxUses: Int

        /// `max_uses` when the spec leaves it out.
        static let defaultMaxUses = 3

        /// What the prompt ends with for an item with `variables`: the queries, one per line.
        func prompt(_ variables: [String: String]) -> String? {
            guard !queries.isEmpty else { return nil }
            return "Search the web for:\n"
                + queries.map { "- " + $0.render(variables) }.joined(separator: "\n")
        }
    }

    /// When a job may run (DESIGN.md, "When work runs").
    struct Constraints: Sendable, Equatable, Codable {
        enum Network: String, Sendable, Codable, CaseIterable { case any, online, unmetered }
        enum Power: String, Sendable, Codable, CaseIterable { case any, ac }
        var network: Network = .any
        var power: Power = .any
        var batteryNotLow: Bool = false
        init(network: Network = .any, power: Power = .any, batteryNotLow: Bool = false) {
            self.network = network
            self.power = power
            self.batteryNotLow = batteryNotLow
        }
    }

    /// Limits a run may not pass; each is checked before a call, not after.
    struct Budget: Sendable, Equatable, Codable {
        var maxInputTokens: Int?
        var maxOutputTokens: Int?
        var maxCalls: Int?
        var maxDollars: Double?
        /// Dollars the job may spend per local day, across all its runs (`per_day`): counted like
        /// the workspace's budget, with reservations, not per run.
        var perDay: Double?
        init(
            maxInputTokens: Int? = nil, maxOutputTokens: Int? = nil, maxCalls: Int? = nil,
            maxDollars: Double? = nil, perDay: Double? = nil
        ) {
            self.perDay = perDay
            self.maxInputTokens = maxInputTokens
            self.maxOutputTokens = maxOutputTokens
            self.maxCalls = maxCalls
            self.maxDollars = maxDollars
        }
    }

    /// How a job's small requests share calls (DESIGN.md, lever 2).
    struct Batching: Sendable, Equatable, Codable {
        /// `batching: off` sends one request per call.
        var enabled = true
        /// Most items packed into one prompt.
        var maxItems = 8
        /// Whether the spec set `max_items` (nil: it did not). Unset, the batch lane packs up to
        /// `BatchLane.mostItems`, since a provider batch's latency does not matter. Optional so a
        /// spec stored before it existed still decodes.
        var maxItemsGiven: Bool?
        /// An item with more input tokens than this is too large to share a prompt and goes alone.
        var maxItemTokens = 1500
        /// `min_agreement`: the audit's target agreement as it was first spelled (`Audit.agree`
        /// says it now and wins); nil: not given.
        var minAgreement: Double?
        init(enabled: Bool = true, maxItems: Int = 8, maxItemTokens: Int = 1500) {
            self.enabled = enabled
            self.maxItems = maxItems
            self.maxItemTokens = maxItemTokens
        }
    }

    /// How a long item is split for summarizing (DESIGN.md, "Long documents"): an item whose `item`
    /// text is longer than `maxTokens` is summarized chunk by chunk, then the summaries are combined.
    struct Chunking: Sendable, Equatable, Codable {
        /// `chunking: off` sends every item whole, however long.
        var enabled = true
        /// Most tokens (`TokenEstimator` units) of document text per chunk, and of summaries per
        /// reduce prompt.
        var maxTokens = 6000
        /// Tokens each chunk repeats from the end of the one before, so no sentence loses its context.
        var overlap = 200
        init(enabled: Bool = true, maxTokens: Int = 6000, overlap: Int = 200) {
            self.enabled = enabled
            self.maxTokens = maxTokens
            self.overlap = overlap
        }

        /// Chunking turned off.
        static let off = Chunking(enabled: false)
    }

    /// `digest: {template: …, max_tokens: N}` (issue 24): once a run's items are settled, one more
    /// request over the answers of the items that are new or changed since the job's previous run
    /// (`ItemChange`), written to `digest.md` in the output folder. None when nothing changed.
    struct Digest: Sendable, Equatable, Codable {
        /// The user message; `{{changes}}` is the new and changed items' answers, `{{count}}` how many.
        var template: Template
        var maxTokens: Int

        /// The template variable that holds the answers.
        static let changesVariable = "changes"
    }

    /// The template variable that holds an item's fetched sources; without it in the template, the
    /// sources are put before the user message.
    static let sourcesVariable = "sources"

    var name: String
    var kind: Kind
    var tier: Tier = .balanced
    var system: String?
    /// Shared instructions (few-shot examples): sent after the system prompt as part of the cached
    /// prefix, once per call however many items the call carries.
    var instructions: String?
    var batching = Batching()
    /// On by default for `summarize` jobs only: other kinds' prompts rarely mean "summarize".
    var chunking: Chunking
    /// `queue: true`: the job takes requests from `offpeak submit` and its spool folder, so it may
    /// have no items of its own.
    var acceptsSubmissions = false
    /// Mark the shared prefix (system and instructions) cacheable with the provider.
    var promptCache = true
    /// `prompt_cache_ttl`: how long a provider that caches marked prefixes (Anthropic) keeps this
    /// job's: `5m` or `1h` whatever the lane; nil (`auto`): an hour where the prefix is reused later
    /// than five minutes (a provider batch), five minutes elsewhere (`PromptCacheTTL.forBatch`).
    var promptCacheTTL: PromptCacheTTL?
    /// The user message, with `{{variable}}` placeholders.
    var template: Template
    /// Inline items and items read from `inputs`, in spec order.
    var items: [Item] = []
    /// Glob patterns (relative to the workspace) of input files; each file is an item.
    var inputs: [String] = []
    /// Research sources (http/https URLs) every item of the job reads: fetched, cached like
    /// answers, and put before the item's prompt (see `ResearchSources`).
    var sources: [String] = []
    /// RSS or Atom feeds (http/https URLs) a `research` job takes items from: each entry becomes
    /// an item, asked once (issue 24). Empty for a job without feeds.
    var feeds: [String] {
        get { storedFeeds ?? [] }
        set { storedFeeds = newValue.isEmpty ? nil : newValue }
    }
    /// Most new feed entries one run takes, oldest first (`max_new`); the rest wait for the next
    /// run. `nil`: all of them. Only with `feeds`.
    var maxNew: Int?
    /// `feeds` as encoded: `nil` rather than empty, so a spec without feeds encodes (and its run's
    /// spec hash stays) as it did before feeds existed, and a spec stored then still decodes.
    private var storedFeeds: [String]?
    /// Output folder, relative to the workspace; default `out/<name>`.
    var output: String
    var constraints = Constraints()
    var budget = Budget()
    /// Max tokens per answer.
    var maxTokens: Int = 512
    var temperature: Double?
    /// Seconds a cached answer stays fresh.
    var cacheTTL: TimeInterval = 24 * 3600
    /// `digest:`: one more answer per run, over its new and changed items' answers (`Digest`).
    var digest: Digest?
    /// `audit:` how batched answers are checked against the same items asked alone; nil: the
    /// defaults (`Audit()`).
    var audit: Audit?
    /// The audit as the job asks for it.
    var auditing: Audit { audit ?? Audit() }

    /// `audit: off`, `audit: 0.05` (the share of batched items also asked alone once their batch
    /// size holds), or `audit: {agree: 95%, rate: 2%, max_share: 3%, proving_share: 25%}`.
    struct Audit: Sendable, Equatable, Codable {
        var enabled = true
        var rate = 0.02
        /// The most of a run's spend the audit may take once its batch sizes hold.
        var maxShare = 0.03
        /// `agree`: the share of batched answers, at every place of a prompt, that must agree
        /// with the same items asked alone (`SequentialTest`); nil: `batching.min_agreement`, else
        /// `defaultAgree`. Optional, as every field added later, so a spec stored before it
        /// existed still decodes.
        var agree: Double?
        /// `proving_share`: the most of a run's spend the audit may take while a batch size is
        /// unproven; nil: `defaultProvingShare`.
        var provingShare: Double?

        static let defaultAgree = 0.95
        static let defaultProvingShare = 0.25

        /// The proving share in force: never less than `max_share` (a job that lets the audit take
        /// half its spend lets proving take as much).
        var proving: Double { max(provingShare ?? Self.defaultProvingShare, maxShare) }
    }

    /// The agreement the audit holds batched answers to.
    var auditTarget: Double { auditing.agree ?? batching.minAgreement ?? Audit.defaultAgree }

    /// What the audit's evidence is gathered for, besides the model and batch size: the part every
    /// prompt of the job shares (system prompt, instructions, template). A job whose prompt changes
    /// starts its audit over.
    var auditShape: String {
        String(
            SHA256.hex(
                [system ?? "", instructions ?? "", template.source].joined(separator: "\u{0}")
            ).prefix(16))
    }
    /// `search:`: every item's call may search the web (`Search`), unless the item says otherwise.
    var search: Search?
    /// `reuse:` as the spec gives it; nil for the kind's default (`reusesUnchanged`). Optional so
    /// a spec without it encodes, and hashes, as it did before it existed.
    var reuse: Reuse?
    /// `robots:` as the spec gives it; nil for `fail`. Optional so a spec without it encodes, and
    /// hashes, as it did before it existed.
    var robots: Robots?
    /// Seconds after the run is created by which it must be done (kept as the run's `deadline_at`).
    /// 24 h or more lets the `auto` lane send the job through the provider's batch API.
    var deadline: TimeInterval?
    /// `wait_for_cheaper_prices: true`: where the model's prices change with the clock, a run starts
    /// (and goes on) only at the cheapest prices its `deadline` leaves time for (`PriceWait`).
    /// Optional so a spec without it encodes, and hashes, as it did before it existed.
    var waitForCheaperPrices: Bool?
    /// `tags:`: what the job's spend is counted under besides its name (a project, a customer, an
    /// agent), kept with each of its ledger rows (`Tags`). Optional so a spec without them encodes,
    /// and hashes, as it did before they existed.
    var tags: [String]?
    /// The job's own fallback chain, instead of its tier's in offpeak.yaml (`fallbacks: []`: none);
    /// nil: the tier's.
    var fallbacks: [FallbackRoute]?
    /// `live`, `batch` or `auto` (nil: `auto`); see `Lane`.
    var lane: Lane?
    /// Seconds each pass of the job (a `run`, a tick's turn) may send calls for; a tick's own
    /// `--window` can end the pass sooner.
    var window: TimeInterval?
    /// 5-field cron expression or `@daily`-style macro.
    var schedule: String?
    var timezone: String?
    var checkpointMaxAge: TimeInterval = 3600
    var downgradeOnBattery: Bool = false
    /// Attempts an item gets before it fails for good; retries wait `RetryBackoff`.
    var maxAttempts: Int = 5
    /// Path of the spec file, for messages.
    var sourcePath: String?

    init(name: String, kind: Kind, template: Template, output: String) {
        self.name = name
        self.kind = kind
        self.template = template
        self.output = output
        self.chunking = kind == .summarize ? Chunking() : .off
    }
}

extension JobSpec {
    /// Whether a cached answer is reused while its prompt is unchanged, past its TTL (`Reuse`).
    /// A job that searches the web has `reuse: ttl` (`JobSpecParser.checkSearches`): its answers rest on
    /// pages its prompt does not hold, so an unchanged prompt says nothing about an unchanged answer.
    var reusesUnchanged: Bool { (reuse ?? (kind == .research ? .unchanged : .ttl)) == .unchanged }

    /// The search `item` asks with: its own, else the job's.
    func search(for item: Item) -> Search? { item.search ?? search }

    /// Whether any item's call may search the web.
    var searchesTheWeb: Bool { search != nil || items.contains { $0.search != nil } }
}
