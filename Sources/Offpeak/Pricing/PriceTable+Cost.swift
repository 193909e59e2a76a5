import Foundation

/// Whether a price is known. A model with no entry, or an entry with limits only, is *unpriced*:
/// its calls are recorded at $0 and marked so, and a dollar budget cannot stop it, so a job with
/// one refuses to start (`JobRunner`). A local model priced at 0 in the table is free, not unpriced.
extension ModelPrice {
    /// The entry says what input or output tokens cost.
    var hasCost: Bool { inputCostPerToken != nil || outputCostPerToken != nil }
}

extension PriceTable {
    /// The model's price when the table says what its tokens cost; `nil` when it does not.
    func cost(of model: String) -> ModelPrice? {
        guard let price = price(for: model), price.hasCost else { return nil }
        return price
    }

    /// `cost(of:)` at the prices in force at `date`: a call's prices where they change with the clock.
    func cost(of model: String, at date: Date) -> ModelPrice? {
        cost(of: model)?.at(date)
    }

    /// The dearest prices of `model` in force at any moment from `start` to `end`: what a call sent
    /// at `start` that may answer as late as `end` is reserved at.
    func cost(of model: String, from start: Date, to end: Date) -> ModelPrice? {
        cost(of: model)?.dearest(from: start, to: end)
    }

    /// What to tell a user whose model has no price.
    static func howToPrice(_ model: String) -> String {
        "add \"\(model)\" with input_cost_per_token and output_cost_per_token to a prices file in "
            + "LiteLLM's model_prices_and_context_window.json format and name it in offpeak.yaml "
            + "(prices: prices.json)"
    }

    /// What to tell a user whose model has no price per web search.
    static func howToPriceSearches(_ model: String) -> String {
        "give \"\(model)\" a search_context_cost_per_query (dollars per search, as "
            + "{\"search_context_size_medium\": 0.01}) in a prices file in LiteLLM's "
            + "model_prices_and_context_window.json format and name it in offpeak.yaml (prices: prices.json)"
    }
}
