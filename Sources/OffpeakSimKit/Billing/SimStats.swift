import Synchronization

/// Which API endpoint a call came through, as `/sim/stats` names it.
public enum SimEndpoint: String, CaseIterable, Sendable {
    case messages
    case chatCompletions = "chat_completions"
    case generateContent = "generate_content"
    /// DeepSeek's chat completions (`POST /chat/completions`, `DeepSeekRoutes`).
    case deepseek
    /// OpenAI's Responses API (`POST /v1/responses`, `ResponsesRoutes`).
    case responses
    /// Mistral's chat completions (`POST /mistral/v1/chat/completions`, `MistralRoutes`).
    case mistral
}

/// The sim's own counters, so a benchmark can compare clients on the same server.
///
/// Every API request counts as a call; only 200 answers are billed and counted as `ok_calls`. An
/// answer is billed when it is made, whether its caller is still there to read it or not (it gave
/// up, or was killed), as real providers bill work whose caller left; a `truncate` fault is never
/// billed (its answer never arrives whole).
/// OpenAI calls are billed in the same normalized kinds as Anthropic's: `input_tokens` is the
/// uncached part of `prompt_tokens`, `cache_read_input_tokens` its `cached_tokens`.
/// Batched answers (`batched_calls`, `batched_items`, `degraded_items`, `damage`) are counted with
/// their bill.
public final class SimStats: Sendable {
    private let state = Mutex(StatsSnapshot())
    private let batchState = Mutex(ProviderBatchStats())

    public init() {}

    /// Counts one API call as it arrives.
    /// - Returns: how many API calls have arrived, this one included.
    @discardableResult
    public func recordCall(_ endpoint: SimEndpoint) -> Int {
        state.withLock { snapshot in
            snapshot.add(endpoint, calls: 1)
            return snapshot.calls
        }
    }

    public func recordFault(_ fault: SimFault) {
        state.withLock { $0.faults[fault.rawValue, default: 0] += 1 }
    }

    /// Bills one answer that is about to be sent.
    /// - Parameter batch: what the answer adds to the batch counters; nil for a prompt that was
    ///   not batched. Counted with the answer, so the counters describe what clients received.
    /// - Parameter window: the price window the answer is billed in, where the API's prices change
    ///   with the clock (`DeepSeekHours`); its tokens are counted under it too.
    public func recordAnswer(
        _ endpoint: SimEndpoint, billed: BilledTokens, batch: BatchTally? = nil, window: String? = nil
    ) {
        state.withLock { snapshot in
            snapshot.add(endpoint, okCalls: 1, billed: billed)
            if let batch { snapshot.add(batch) }
            if let window { snapshot.billedByWindow[window, default: BilledTokens()] += billed }
        }
    }

    /// One flex call (`service_tier: "flex"`), refused for capacity or taken (at the default tier,
    /// `asDefault`, or as flex).
    public func recordFlex(refused: Bool, asDefault: Bool = false) {
        state.withLock { snapshot in
            snapshot.flexCalls += 1
            if refused { snapshot.flexRefused += 1 }
            if asDefault { snapshot.flexAsDefault += 1 }
        }
    }

    /// One request for a research source (`/sources/...`), answered `304` or not.
    public func recordSourceFetch(notModified: Bool) {
        state.withLock { snapshot in
            snapshot.sources.fetches += 1
            if notModified { snapshot.sources.notModified += 1 }
        }
    }

    /// One request for `/robots.txt`, whatever the answer.
    public func recordRobotsFetch() {
        state.withLock { $0.sources.robots += 1 }
    }

    /// One provider batch was created.
    func recordBatchCreated() {
        batchState.withLock { $0.batches.created += 1 }
    }

    /// One provider batch ended: its answers' tokens and its requests' ends, billed once.
    func recordBatchEnd(
        billed: BilledTokens,
        counts: (processing: Int, succeeded: Int, errored: Int, canceled: Int, expired: Int)
    ) {
        batchState.withLock { snapshot in
            snapshot.billedBatch = snapshot.billedBatch + billed
            snapshot.batches.ended += 1
            snapshot.batches.succeeded += counts.succeeded
            snapshot.batches.errored += counts.errored
            snapshot.batches.expired += counts.expired
            snapshot.batches.canceled += counts.canceled
        }
    }

    public func snapshot() -> StatsSnapshot {
        state.withLock { $0 }
    }

    public func batchSnapshot() -> ProviderBatchStats {
        batchState.withLock { $0 }
    }

    public func reset() {
        state.withLock { $0 = StatsSnapshot() }
        batchState.withLock { $0 = ProviderBatchStats() }
    }
}

extension StatsSnapshot {
    fileprivate mutating func add(_ batch: BatchTally) {
        batchedCalls += 1
        batchedItems += batch.items
        degradedItems += batch.degraded
        for kind in batch.damage {
            damage[kind.rawValue, default: 0] += 1
        }
    }

    fileprivate mutating func add(
        _ endpoint: SimEndpoint, calls: Int = 0, okCalls: Int = 0, billed: BilledTokens = BilledTokens()
    ) {
        self.calls += calls
        self.okCalls += okCalls
        self.billed = self.billed + billed
        var row = byEndpoint[endpoint.rawValue] ?? EndpointStats()
        row.calls += calls
        row.okCalls += okCalls
        row.billed = row.billed + billed
        byEndpoint[endpoint.rawValue] = row
    }
}
