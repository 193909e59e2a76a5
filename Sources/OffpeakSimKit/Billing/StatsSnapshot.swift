/// Tokens billed, by kind; the kinds never overlap (see `InputBilling`).
public struct BilledTokens: Sendable, Equatable, Codable {
    public var inputTokens = 0
    public var outputTokens = 0
    public var cacheCreationInputTokens = 0
    /// The part of `cacheCreationInputTokens` written to the 1-hour cache (billed at 2x, not 1.25x).
    public var cacheCreation1hInputTokens = 0
    public var cacheReadInputTokens = 0
    /// Web searches run (`SimWebSearch`), billed per search as Anthropic bills them.
    public var webSearchRequests = 0

    public init(
        input: Int = 0, output: Int = 0, cacheCreation: Int = 0, cacheCreationHour: Int = 0,
        cacheRead: Int = 0,
        searches: Int = 0
    ) {
        self.inputTokens = input
        self.outputTokens = output
        self.cacheCreationInputTokens = cacheCreation
        self.cacheCreation1hInputTokens = cacheCreationHour
        self.cacheReadInputTokens = cacheRead
        self.webSearchRequests = searches
    }

    public init(_ input: InputBilling, outputTokens: Int, searches: Int = 0) {
        self.init(
            input: input.uncached, output: outputTokens, cacheCreation: input.cacheCreation,
            cacheCreationHour: input.cacheCreationHour, cacheRead: input.cacheRead, searches: searches)
    }

    enum CodingKeys: String, CodingKey {
        case inputTokens = "input_tokens"
        case outputTokens = "output_tokens"
        case cacheCreationInputTokens = "cache_creation_input_tokens"
        case cacheCreation1hInputTokens = "cache_creation_1h_input_tokens"
        case cacheReadInputTokens = "cache_read_input_tokens"
        case webSearchRequests = "web_search_requests"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        inputTokens = try container.decode(Int.self, forKey: .inputTokens)
        outputTokens = try container.decode(Int.self, forKey: .outputTokens)
        cacheCreationInputTokens = try container.decode(Int.self, forKey: .cacheCreationInputTokens)
        cacheCreation1hInputTokens =
            try container.decodeIfPresent(Int.self, forKey: .cacheCreation1hInputTokens) ?? 0
        cacheReadInputTokens = try container.decode(Int.self, forKey: .cacheReadInputTokens)
        webSearchRequests = try container.decodeIfPresent(Int.self, forKey: .webSearchRequests) ?? 0
    }

    public static func += (lhs: inout BilledTokens, rhs: BilledTokens) { lhs = lhs + rhs }

    public static func + (lhs: BilledTokens, rhs: BilledTokens) -> BilledTokens {
        BilledTokens(
            input: lhs.inputTokens + rhs.inputTokens, output: lhs.outputTokens + rhs.outputTokens,
            cacheCreation: lhs.cacheCreationInputTokens + rhs.cacheCreationInputTokens,
            cacheCreationHour: lhs.cacheCreation1hInputTokens + rhs.cacheCreation1hInputTokens,
            cacheRead: lhs.cacheReadInputTokens + rhs.cacheReadInputTokens,
            searches: lhs.webSearchRequests + rhs.webSearchRequests)
    }
}

/// One endpoint's row in `/sim/stats`: its calls and the tokens billed, flat.
public struct EndpointStats: Sendable, Equatable, Codable {
    public var calls = 0
    public var okCalls = 0
    public var billed = BilledTokens()

    public init() {}

    enum CodingKeys: String, CodingKey {
        case calls
        case okCalls = "ok_calls"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        calls = try container.decode(Int.self, forKey: .calls)
        okCalls = try container.decode(Int.self, forKey: .okCalls)
        billed = try BilledTokens(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(calls, forKey: .calls)
        try container.encode(okCalls, forKey: .okCalls)
        try billed.encode(to: encoder)
    }
}

/// What `GET /sim/stats` returns: every counter at one instant.
public struct StatsSnapshot: Sendable, Equatable, Codable {
    /// Every API request, whatever its outcome.
    public var calls = 0
    /// 200 answers fully sent (and so billed).
    public var okCalls = 0
    /// Injected faults by name; every fault is listed, zero when it never hit.
    public var faults: [String: Int] = Dictionary(
        uniqueKeysWithValues: SimFault.allCases.map { ($0.rawValue, 0) })
    public var billed = BilledTokens()
    /// Keyed by `SimEndpoint` raw value; both endpoints are always listed.
    public var byEndpoint: [String: EndpointStats] = Dictionary(
        uniqueKeysWithValues: SimEndpoint.allCases.map { ($0.rawValue, EndpointStats()) })
    /// Billed answers to batched prompts (`<item id="...">` blocks), and the items they held.
    public var batchedCalls = 0
    public var batchedItems = 0
    /// Items of billed batched answers whose content a degrading model (`--degrading-model`) got
    /// wrong, before any damage or weak-model failure spoiled the answer's shape.
    public var degradedItems = 0
    /// Damage done to billed batched answers, by `DamagePolicy.Kind`; every kind is listed.
    public var damage: [String: Int] = Dictionary(
        uniqueKeysWithValues: DamagePolicy.Kind.allCases.map { ($0.rawValue, 0) })
    /// Research-source requests (`/sources/...`), which are not API calls.
    public var sources = SourceStats()
    /// Calls asking for flex processing, and those refused for capacity (`FlexGate`).
    public var flexCalls = 0
    public var flexRefused = 0
    /// Flex calls taken at the default tier, billed at the live prices (`FlexGate.answersAsDefault`).
    public var flexAsDefault = 0
    /// Tokens billed where prices change with the clock (DeepSeek's), by the window each answer
    /// was billed in on the sim's clock (`peak`, `off-peak`).
    public var billedByWindow: [String: BilledTokens] = [:]

    public init() {}

    enum CodingKeys: String, CodingKey {
        case calls
        case okCalls = "ok_calls"
        case faults
        case billed
        case byEndpoint = "by_endpoint"
        case batchedCalls = "batched_calls"
        case batchedItems = "batched_items"
        case degradedItems = "degraded_items"
        case damage
        case sources
        case flexCalls = "flex_calls"
        case flexRefused = "flex_refused"
        case flexAsDefault = "flex_as_default"
        case billedByWindow = "billed_by_window"
    }

    public init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        calls = try fields.decode(Int.self, forKey: .calls)
        okCalls = try fields.decode(Int.self, forKey: .okCalls)
        faults = try fields.decode([String: Int].self, forKey: .faults)
        billed = try fields.decode(BilledTokens.self, forKey: .billed)
        byEndpoint = try fields.decode([String: EndpointStats].self, forKey: .byEndpoint)
        batchedCalls = try fields.decode(Int.self, forKey: .batchedCalls)
        batchedItems = try fields.decode(Int.self, forKey: .batchedItems)
        degradedItems = try fields.decode(Int.self, forKey: .degradedItems)
        damage = try fields.decode([String: Int].self, forKey: .damage)
        sources = try fields.decode(SourceStats.self, forKey: .sources)
        flexCalls = try fields.decode(Int.self, forKey: .flexCalls)
        flexRefused = try fields.decode(Int.self, forKey: .flexRefused)
        flexAsDefault = try fields.decodeIfPresent(Int.self, forKey: .flexAsDefault) ?? 0
        billedByWindow =
            try fields.decodeIfPresent([String: BilledTokens].self, forKey: .billedByWindow) ?? [:]
    }
}

/// What one billed answer adds to the batch counters of `/sim/stats`.
public struct BatchTally: Sendable, Equatable {
    /// How many items the batched prompt held.
    public var items: Int
    /// The damage done to its answer, one entry per damaged item (`wrap` once).
    public var damage: [DamagePolicy.Kind]
    /// How many of its items a degrading model answered wrong (`Degradation`).
    public var degraded: Int

    public init(items: Int, damage: [DamagePolicy.Kind] = [], degraded: Int = 0) {
        self.items = items
        self.damage = damage
        self.degraded = degraded
    }
}
