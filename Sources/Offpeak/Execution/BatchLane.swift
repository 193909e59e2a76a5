import Foundation

/// Which lane a pass sends its calls through (DESIGN.md, lever 4), and how often a batch out at
/// the provider is asked about.
enum BatchLane {
    /// Both providers answer a batch within 24 hours.
    static let completionWindow: TimeInterval = 24 * 3600
    /// What a deadline must leave beyond the completion window for a batch to be worth it: time to
    /// notice the batch ended, collect it, and send anything it did not answer live.
    static let margin: TimeInterval = 3600
    /// Provider requests in one batch at most, whatever the API allows: a batch is collected in one
    /// download and booked in one pass, so its size bounds that pass's memory and time.
    static let mostRequests = 10_000
    /// Items a batch-lane round plans, and so the most one batch carries: ten live rounds' worth,
    /// so a job of 100,000 items makes ten batches to poll and collect, not a hundred; a round holds
    /// that many stored requests in memory (tens of MB for documents of a few KB).
    static let roundItems = 10_000
    /// Results booked in one transaction when a batch is collected: one fsync for many, and a stop
    /// signal is heard between two.
    static let resultsPerCommit = 256
    /// Items in one batched prompt in the batch lane when the spec does not set
    /// `batching.max_items`. The live default (8) keeps a call's latency short; a provider batch's
    /// latency does not matter, and fewer, larger prompts pay the shared prefix and the format
    /// instructions fewer times (W-summarize: 2.49x cheaper than naive at 32, 2.5x at 64).
    /// Not the most a spec may ask (100): small models lose more of long answers, and an answer
    /// that fails the check is asked again in another batch, hours later. A model whose batched
    /// answers lose items gets smaller prompts from its record (`BatchFitness`), so the large
    /// default costs only the first batch of a weak model. The model's output limit still bounds
    /// each prompt (`BatchPlanner`).
    static let mostItems = 64

    /// The lane of the pass: `batch` with the provider's batch API, or `live` (nil) with why.
    /// - Parameters:
    ///   - batchAPI: offpeak.yaml's `batch_api`: whether the server has the provider's batch API,
    ///     whatever the provider declares for its host (`ProviderCapabilities.batchHosts`).
    ///   - deadlineAt: the run's deadline, if it has one; a batch must be able to finish before it.
    static func choose(
        spec: JobSpec, workspaceLane: JobSpec.Lane, batchAPI: Bool? = nil, provider: any CompletionProvider,
        deadlineAt: Date?, now: Date
    ) -> (api: (any BatchAPI)?, why: String?) {
        let asked = spec.lane ?? .auto
        if asked == .live || asked == .flex || (asked == .auto && [.live, .flex].contains(workspaceLane)) {
            return (nil, nil)
        }
        guard let api = provider.batches else {
            return (nil, asked == .batch ? "\(provider.kind.rawValue) has no batch API; calls go live" : nil)
        }
        guard provider.capabilities.hasBatchAPI(at: provider.baseURL, declared: batchAPI) else {
            let why =
                "no batch API is declared for \(provider.kind.rawValue) at \(provider.baseURL) (`batch_api: true` "
                + "in offpeak.yaml declares one); calls go live"
            return (nil, asked == .batch ? why : nil)
        }
        if asked == .auto {
            let longDeadline = (spec.deadline ?? 0) >= completionWindow
            // A server on this machine (llama.cpp, Ollama) has no batch API, whatever it imitates,
            // unless the provider says it has (offpeak-sim).
            let remote =
                provider.capabilities.batchesOnThisMachine || !ConditionGate.isLocal(provider.baseURL)
            guard (longDeadline || workspaceLane == .batch) && remote else { return (nil, nil) }
        }
        if let deadlineAt, deadlineAt.timeIntervalSince(now) < completionWindow + margin {
            return (
                nil, "the deadline (\(Timestamp.text(deadlineAt))) leaves no time for a batch; calls go live"
            )
        }
        return (api, nil)
    }

    /// When to ask about a batch next: soon while it is young, then less often as it ages (a tenth
    /// of its age, from 2 seconds to 15 minutes), so ticks every few minutes do not ask about every
    /// batch each time when nothing can have changed.
    static func nextPoll(submittedAt: Date?, now: Date) -> Date {
        let age = max(0, now.timeIntervalSince(submittedAt ?? now))
        return now + min(15 * 60, max(2, age / 10))
    }
}
