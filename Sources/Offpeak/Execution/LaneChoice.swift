import Foundation

/// The lane a pass sends its calls in (DESIGN.md, lever 4): a provider batch when `BatchLane` says
/// so; else flex processing when the job asks for it, or its deadline leaves room (`FlexLane`),
/// and the model takes it; else live.
struct LaneChoice {
    /// `batch`, `flex` or `live`.
    var lane: CallLane
    /// The batch API, in the batch lane.
    var api: (any BatchAPI)?
    /// Why the pass goes live when the job asked for another lane.
    var why: String?

    /// How the pass's calls that go straight to the provider go (`CallLanes.direct`).
    var callLane: CallLane { lane == .flex ? .flex : .live }

    static func choose(
        spec: JobSpec, model: String, prices: PriceTable, workspaceLane: JobSpec.Lane, batchAPI: Bool? = nil,
        provider: any CompletionProvider, deadlineAt: Date?, now: Date
    ) -> LaneChoice {
        let batch = BatchLane.choose(
            spec: spec, workspaceLane: workspaceLane, batchAPI: batchAPI, provider: provider,
            deadlineAt: deadlineAt, now: now)
        if let api = batch.api { return LaneChoice(lane: .batch, api: api) }
        // A deadline too close for a batch may leave room for flex.
        let flex = FlexLane.choose(
            spec: spec, model: model, prices: prices, workspaceLane: workspaceLane, provider: provider,
            deadlineAt: deadlineAt, now: now)
        if flex.taken { return LaneChoice(lane: .flex) }
        return LaneChoice(lane: .live, why: batch.why ?? flex.why)
    }
}

/// When a pass's calls go with flex processing (`CallLane.flex`), and what a capacity refusal does.
enum FlexLane {
    /// What a deadline must leave for a flex call: the provider may take this long to answer one
    /// (OpenAI's guide: 15 minutes). A deadline closer than this sends the calls live.
    static let minimumLead: TimeInterval = 15 * 60

    /// Whether the pass takes flex processing, or goes live with why (only when the job asked).
    ///
    /// `lane: flex` (the job's, or `offpeak.yaml`'s for an `auto` job) takes it wherever the model
    /// does; `auto` takes it for a deadline of at least `minimumLead` (a deadline of a day or more
    /// took the batch lane already, where there is one), toward a provider not on this machine: a
    /// local server imitating OpenAI (llama.cpp, Ollama) has no flex processing.
    static func choose(
        spec: JobSpec, model: String, prices: PriceTable, workspaceLane: JobSpec.Lane,
        provider: any CompletionProvider, deadlineAt: Date?, now: Date
    ) -> (taken: Bool, why: String?) {
        let asked = spec.lane ?? .auto
        let explicit = asked == .flex || (asked == .auto && workspaceLane == .flex)
        if !explicit {
            guard asked == .auto, workspaceLane == .auto, (spec.deadline ?? 0) >= minimumLead,
                !ConditionGate.isLocal(provider.baseURL)
            else { return (false, nil) }
        }
        guard takes(model, provider: provider, prices: prices) else {
            let why = "\(model) on \(provider.kind.rawValue) has no flex processing; calls go live"
            return (false, explicit ? why : nil)
        }
        if let deadlineAt, deadlineAt.timeIntervalSince(now) < minimumLead {
            let why =
                "the deadline (\(Timestamp.text(deadlineAt))) leaves no time for flex processing; calls go live"
            return (false, explicit ? why : nil)
        }
        return (true, nil)
    }

    /// Whether calls to `model` may go flex: the provider has flex processing, and the model is
    /// one it lists or the price table gives flex prices.
    static func takes(_ model: String, provider: any CompletionProvider, prices: PriceTable) -> Bool {
        guard let flex = provider.capabilities.flex else { return false }
        return flex.takes(model) || prices.price(for: model)?.hasFlexPrices == true
    }

    /// How long the items of a flex call refused for capacity wait before they are asked again:
    /// a minute after the pass's first refusal, doubling with each, at most 15 minutes.
    static func refusalDelay(refusals: Int) -> TimeInterval {
        min(15 * 60, 60 * pow(2, Double(min(max(refusals, 1) - 1, 10))))
    }
}
