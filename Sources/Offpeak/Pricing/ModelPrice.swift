import Foundation

/// One model's prices and limits, as an entry of LiteLLM's `model_prices_and_context_window.json`.
///
/// Costs are dollars per token. Any field may be missing; a missing input or output cost counts
/// as free, so a local model with no entry costs nothing.
struct ModelPrice: Sendable, Equatable, Decodable {
    var inputCostPerToken: Double?
    var outputCostPerToken: Double?
    var cacheReadInputTokenCost: Double?
    var cacheCreationInputTokenCost: Double?
    /// A write to Anthropic's 1-hour cache (LiteLLM's `cache_creation_input_token_cost_above_1hr`);
    /// nil: twice the input price for a model with Anthropic's cache, as its pricing page has it.
    var cacheCreationInputTokenCostAbove1Hr: Double?
    var inputCostPerTokenBatches: Double?
    var outputCostPerTokenBatches: Double?
    /// Flex processing's prices (`CallLane.flex`), as LiteLLM lists them for OpenAI's models; a
    /// model without them bills flex at its batch prices, as OpenAI does.
    var inputCostPerTokenFlex: Double?
    var outputCostPerTokenFlex: Double?
    var cacheReadInputTokenCostFlex: Double?
    var maxInputTokens: Int?
    var maxOutputTokens: Int?
    /// LiteLLM's legacy limit, usually the output limit.
    var maxTokens: Int?
    var litellmProvider: String?
    var mode: String?
    /// Dollars per web search (`WebSearch`), by LiteLLM's search context sizes; offpeak asks for
    /// the default size, so it reads `medium` (else `low`, else `high`).
    var searchContextCostPerQuery: SearchCost?
    /// Prices that change with the clock (`PriceWindows`): offpeak's `price_windows`, else LiteLLM's
    /// `off_peak_pricing`. The other fields are the prices outside every window.
    var priceWindows: PriceWindows?
    var offPeakPricing: OffPeakPricing?
    /// The window these prices are in force for (`at(_:)`); nil: prices that do not change.
    var window: String? = nil

    /// LiteLLM's `search_context_cost_per_query`.
    struct SearchCost: Sendable, Equatable, Decodable {
        var low: Double?
        var medium: Double?
        var high: Double?

        enum CodingKeys: String, CodingKey {
            case low = "search_context_size_low"
            case medium = "search_context_size_medium"
            case high = "search_context_size_high"
        }
    }

    /// LiteLLM's field names, so entries decode and encode in its format.
    enum CodingKeys: String, CodingKey {
        case inputCostPerToken = "input_cost_per_token"
        case outputCostPerToken = "output_cost_per_token"
        case cacheReadInputTokenCost = "cache_read_input_token_cost"
        case cacheCreationInputTokenCost = "cache_creation_input_token_cost"
        case cacheCreationInputTokenCostAbove1Hr = "cache_creation_input_token_cost_above_1hr"
        case inputCostPerTokenBatches = "input_cost_per_token_batches"
        case outputCostPerTokenBatches = "output_cost_per_token_batches"
        case inputCostPerTokenFlex = "input_cost_per_token_flex"
        case outputCostPerTokenFlex = "output_cost_per_token_flex"
        case cacheReadInputTokenCostFlex = "cache_read_input_token_cost_flex"
        case maxInputTokens = "max_input_tokens"
        case maxOutputTokens = "max_output_tokens"
        case maxTokens = "max_tokens"
        case litellmProvider = "litellm_provider"
        case mode
        case searchContextCostPerQuery = "search_context_cost_per_query"
        case priceWindows = "price_windows"
        case offPeakPricing = "off_peak_pricing"
    }

    init(
        inputCostPerToken: Double? = nil, outputCostPerToken: Double? = nil,
        cacheReadInputTokenCost: Double? = nil,
        cacheCreationInputTokenCost: Double? = nil, inputCostPerTokenBatches: Double? = nil,
        outputCostPerTokenBatches: Double? = nil, maxInputTokens: Int? = nil, maxOutputTokens: Int? = nil,
        maxTokens: Int? = nil, litellmProvider: String? = nil, mode: String? = nil, perSearch: Double? = nil
    ) {
        self.inputCostPerToken = inputCostPerToken
        self.outputCostPerToken = outputCostPerToken
        self.cacheReadInputTokenCost = cacheReadInputTokenCost
        self.cacheCreationInputTokenCost = cacheCreationInputTokenCost
        self.inputCostPerTokenBatches = inputCostPerTokenBatches
        self.outputCostPerTokenBatches = outputCostPerTokenBatches
        self.maxInputTokens = maxInputTokens
        self.maxOutputTokens = maxOutputTokens
        self.maxTokens = maxTokens
        self.litellmProvider = litellmProvider
        self.mode = mode
        self.searchContextCostPerQuery = perSearch.map { SearchCost(medium: $0) }
    }

    /// When the prices change with the clock; nil: they do not.
    var windows: PriceWindows? { priceWindows ?? offPeakPricing?.windows }

    /// The prices in force at `date`, named by their window (`window`); these prices themselves
    /// when they do not change with the clock.
    func at(_ date: Date) -> ModelPrice {
        guard let windows else { return self }
        let period = windows.period(at: date)
        var price = period.prices?.applied(to: self) ?? self
        price.priceWindows = nil
        price.offPeakPricing = nil
        price.window = period.name
        return price
    }

    /// Each change of prices after `start`, up to `end` included, with the prices in force from
    /// then (`at(_:)`); none when the prices do not change with the clock.
    func changes(after start: Date, through end: Date) -> [(at: Date, price: ModelPrice)] {
        guard let windows else { return [] }
        var changes: [(at: Date, price: ModelPrice)] = []
        var moment = start
        while let change = windows.nextChange(after: moment, horizon: end.timeIntervalSince(moment)) {
            changes.append((change, at(change)))
            moment = change
        }
        return changes
    }

    /// The dearest prices in force at any moment from `start` to `end` (`at(_:)`).
    func dearest(from start: Date, to end: Date) -> ModelPrice {
        changes(after: start, through: end).map(\.price).reduce(at(start)) { dearest, then in
            then.referenceDollars > dearest.referenceDollars ? then : dearest
        }
    }

    /// A million tokens each of input and output, live: for telling which of two prices is dearer.
    var referenceDollars: Double {
        dollars(for: Usage(input: 1_000_000, output: 1_000_000), lane: .live)
    }

    /// What one web search costs; nil when the table does not say.
    var perSearch: Double? {
        searchContextCostPerQuery.flatMap { $0.medium ?? $0.low ?? $0.high }
    }

    /// Anthropic models bill cache writes above the input price; other providers' don't.
    var isAnthropicLike: Bool {
        litellmProvider?.lowercased().contains("anthropic") == true
    }

    /// What the tokens of one call cost in `lane`.
    ///
    /// When the table lacks a price, it is derived rather than guessed low:
    /// - cache writes: 1.25x input for Anthropic-like models (their 5-minute cache rate), else the
    ///   input price; cache reads: 0.1x input for Anthropic-like models, else the input price;
    /// - batch: without batch prices the normal ones apply at half (both providers' discount).
    ///   Cache reads and writes get the same discount as input, as both providers bill;
    /// - flex: its own prices where the table has them, else the batch prices (OpenAI bills flex
    ///   "at Batch API rates").
    ///
    /// Web searches cost `perSearch` each, in any lane (no provider discounts them).
    func dollars(for usage: Usage, lane: CallLane) -> Double {
        let input = inputCostPerToken ?? 0
        let output = outputCostPerToken ?? 0
        let cacheWrite = cacheCreationInputTokenCost ?? (isAnthropicLike ? input * 1.25 : input)
        let cacheWriteHour = cacheCreationInputTokenCostAbove1Hr ?? (isAnthropicLike ? input * 2 : cacheWrite)
        var cacheRead = cacheReadInputTokenCost ?? (isAnthropicLike ? input * 0.1 : input)
        var inputFactor = 1.0
        var outputPrice = output
        if lane != .live {
            inputFactor = 0.5
            if let batchInput = inputCostPerTokenBatches, input > 0 { inputFactor = batchInput / input }
            outputPrice = outputCostPerTokenBatches ?? output * 0.5
        }
        if lane == .flex {
            if let flexInput = inputCostPerTokenFlex, input > 0 { inputFactor = flexInput / input }
            if let flexOutput = outputCostPerTokenFlex { outputPrice = flexOutput }
            if let flexRead = cacheReadInputTokenCostFlex, inputFactor > 0 {
                cacheRead = flexRead / inputFactor
            }
        }
        let inputDollars =
            Double(usage.input) * input + Double(usage.cacheWrite - usage.cacheWriteHour) * cacheWrite
            + Double(usage.cacheWriteHour) * cacheWriteHour + Double(usage.cacheRead) * cacheRead
        return inputDollars * inputFactor + Double(usage.output) * outputPrice + searchDollars(usage.searches)
    }

    /// What a call's worst usage (`CompletionRequest.worstUsage`) may cost: its cache writes at the
    /// write price, or as plain input where the model's writes cost less than its input (Gemini's,
    /// priced as a stored context), whichever is dearer.
    func worstDollars(for worst: Usage, lane: CallLane) -> Double {
        var plain = worst
        plain.input += plain.cacheWrite
        plain.cacheWrite = 0
        plain.cacheWriteHour = 0
        return max(dollars(for: worst, lane: lane), dollars(for: plain, lane: lane))
    }

    /// What `searches` web searches cost.
    func searchDollars(_ searches: Int) -> Double { Double(searches) * (perSearch ?? 0) }

    /// What the same tokens would cost sent plainly: no prompt cache, no batch discount. The
    /// difference from `dollars(for:lane:)` is what offpeak saved.
    func naiveDollars(for usage: Usage) -> Double {
        Double(usage.totalInput) * (inputCostPerToken ?? 0) + Double(usage.output) * (outputCostPerToken ?? 0)
            + searchDollars(usage.searches)
    }
}

extension ModelPrice {
    /// Whether the table gives batch prices; without them a batch is priced at half the live price.
    var hasBatchPrices: Bool { inputCostPerTokenBatches != nil || outputCostPerTokenBatches != nil }

    /// Whether the table gives flex prices: the model takes flex processing, whatever its name.
    var hasFlexPrices: Bool { inputCostPerTokenFlex != nil || outputCostPerTokenFlex != nil }

    /// What one output token costs in input tokens, for weighing output against input; nil when
    /// the table lacks either price.
    var outputWeight: Double? {
        guard let input = inputCostPerToken, let output = outputCostPerToken, input > 0 else { return nil }
        return output / input
    }
}
