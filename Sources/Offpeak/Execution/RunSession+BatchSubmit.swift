import Foundation
import Logging

/// Submitting planned calls to the provider's batch API.
extension RunSession {
    /// Sends `planned` through provider batches: one model per batch (OpenAI's rule), within the
    /// API's limits and `BatchLane.mostRequests`, each call admitted by the gate with the worst case
    /// of every batch still out, so a budget is never overshot by batches in flight.
    /// - Returns: why the pass stops, if it does.
    mutating func submitBatches(_ planned: [PlannedCall], api: any BatchAPI) throws(OffpeakError) -> RunStop?
    {
        var order: [String] = []
        var byModel: [String: [PlannedCall]] = [:]
        for call in planned {
            if byModel[call.request.model] == nil { order.append(call.request.model) }
            byModel[call.request.model, default: []].append(call)
        }
        let mostRequests = min(api.limits.maxRequests, BatchLane.mostRequests)
        for model in order {
            var rest = byModel[model]?[...] ?? []
            let price = context.prices.cost(of: model)
            // Its prefixes may take the hour (`PromptCacheTTL.forBatch` decides once it is made).
            let mostTTL = PromptCacheTTL.mostForBatch(asked: spec.promptCacheTTL)
            while !rest.isEmpty {
                var take: [PlannedCall] = []
                // The batches still out, then this one's calls as they are added.
                var worst = try context.store.batches.openBatchLoad(runID: run.id)
                let out = worst
                var bytes = 0
                var stop: RunStop?
                // Each request's worst case is reserved against the workspace's budgets until the
                // batch's own row (its worst case, held until collected) counts it instead.
                var reservations: [Int64] = []
                var audits: [BatchAudit] = []
                while let call = rest.first, take.count + audits.count < mostRequests {
                    // The call's audit requests travel with it, in the same batch.
                    let singles = batchAudits(of: call)
                    let requests = [call.request] + singles.map(\.request)
                    let size = requests.reduce(0) { $0 + BatchLane.estimatedBytes($1) }
                    if !take.isEmpty, bytes + size > api.limits.maxBytes / 10 * 9 { break }
                    if let refused = try checkGate(
                        call, price: price, inFlight: worst, lane: .batch, cacheTTL: mostTTL)
                    {
                        stop = refused
                        break
                    }
                    var cost = CallsInFlight.Worst(inputTokens: 0, outputTokens: 0, dollars: 0)
                    for request in requests {
                        let input = TokenEstimator.inputTokens(request)
                        cost.inputTokens += input
                        cost.outputTokens += request.maxTokens
                        cost.dollars +=
                            price?.worstDollars(
                                for: request.worstUsage(inputTokens: input, ttl: mostTTL),
                                lane: .batch) ?? 0
                    }
                    let reserved = try reserve(cost, lost: nil, settling: nil)
                    if let refused = reserved.stop {
                        stop = refused
                        break
                    }
                    if let id = reserved.id { reservations.append(id) }
                    worst.calls += requests.count
                    worst.inputTokens += cost.inputTokens
                    worst.outputTokens += cost.outputTokens
                    worst.dollars += cost.dollars
                    bytes += size
                    take.append(call)
                    audits += singles
                    rest.removeFirst()
                }
                if !take.isEmpty,
                    let failed = try create(
                        take, audits: audits, model: model, worst: worst, out: out, api: api,
                        releasing: reservations)
                {
                    return failed
                }
                if let stop { return stop }
            }
        }
        return nil
    }

    /// Commits one batch, then creates it at the provider and records its id.
    /// - Returns: why the pass stops, when the provider did not take the batch.
    /// - Parameters:
    ///   - worst: the worst case of the batches out and this one; `out`: of those out, so this
    ///     batch's own is the difference.
    ///   - reservations: its requests' budget reservations, given back once the batch's row holds them.
    private mutating func create(
        _ calls: [PlannedCall], audits: [BatchAudit], model: String, worst: Spend, out: Spend,
        api: any BatchAPI, releasing reservations: [Int64]
    ) throws(OffpeakError) -> RunStop? {
        let store = context.store
        let batch = try store.batches.prepareBatch(
            runID: run.id, provider: context.provider.kind.rawValue, model: model,
            calls: calls.map { $0.requests.map(\.id) }, audits: audits.map(\.slot),
            worstDollars: worst.dollars - out.dollars,
            worstTokens: (worst.inputTokens - out.inputTokens, worst.outputTokens - out.outputTokens),
            host: context.host, now: Date())
        for id in reservations { try store.ledger.releaseReservation(id) }
        // The batch's requests land over hours: a prefix they share is cached for an hour.
        let ttl = PromptCacheTTL.forBatch(
            calls.map(\.request) + audits.map(\.request), asked: spec.promptCacheTTL)
        func sent(_ request: CompletionRequest) -> CompletionRequest {
            var request = request
            request.cacheTTL = ttl
            return request
        }
        let requests =
            calls.enumerated().map { index, call in
                BatchRequest(customID: "\(batch.id)_\(index)", request: sent(call.request))
            }
            + audits.enumerated().map { index, audit in
                BatchRequest(
                    customID: BatchRecord.auditCustomID(batchID: batch.id, index: index),
                    request: sent(audit.request))
            }
        let remote: RemoteBatch
        do { remote = try api.create(label: batch.id, requests: requests) } catch {
            return try createFailed(batch, error)
        }
        let now = Date()
        let next = BatchLane.nextPoll(submittedAt: now, now: now)
        try store.batches.recordSubmitted(batchID: batch.id, remoteID: remote.id, now: now, nextPoll: next)
        try store.batches.recordPoll(
            batchID: batch.id, status: remote.status, counts: remote.counts, expiresAt: remote.expiresAt,
            next: next)
        tally.callsMade += requests.count
        let items = calls.reduce(0) { $0 + $1.requests.count }
        tally.submittedNow += items
        let audited = audits.isEmpty ? "" : " and \(Plural.count(audits.count, "audit request"))"
        context.logger.info(
            "submitted batch \(batch.id) as \(remote.id): \(Plural.count(calls.count, "request")) carrying \(Plural.count(items, "item"))\(audited)"
        )
        return nil
    }

    /// A create call that failed. Refused outright (a 4xx answer), the batch was never made: its
    /// requests go back to pending, and the pass stops (a key or permission problem) or sends them
    /// live (a server without this batch API). Any other failure may have made it: the batch stays
    /// `preparing` for the next pass to reconcile, so nothing is sent twice.
    private mutating func createFailed(_ batch: BatchRecord, _ error: ProviderError) throws(OffpeakError)
        -> RunStop?
    {
        let store = context.store
        let status: Int
        switch error {
        case .http(let code, _, _) where (400..<500).contains(code) && code != 408: status = code
        case .keyRefused: status = 401  // refused under another status (Gemini's 400 API_KEY_INVALID)
        default:
            return RunStop(
                state: .interrupted,
                reason: "submitting batch \(batch.id) failed (\(error)); the next pass asks the provider "
                    + "whether it was made before sending anything again",
                status: .temporaryFailure)
        }
        try store.batches.abandonPreparing(batchID: batch.id, reason: "refused: \(error)", now: Date())
        switch status {
        case 401, 403:
            return RunStop(
                state: .interrupted, reason: "the batch API refused the key: \(error)", status: .configuration
            )
        case 429:
            return RunStop(
                state: .interrupted, reason: "the batch API is rate limited: \(error)",
                status: .temporaryFailure)
        default:
            context.logger.warning(
                "the provider's batch API refused batch \(batch.id) (\(error)); calls go live")
            lanes.batchAPI = nil
            return nil
        }
    }
}

extension BatchLane {
    /// The most a create call may take to be answered, after its batch was prepared; a batch found
    /// created later than this is someone else's.
    static let createdWithin: TimeInterval = 30 * 60

    /// About how many bytes a request adds to a batch (its JSON: text plus the wrapping).
    static func estimatedBytes(_ request: CompletionRequest) -> Int {
        request.messages.reduce(512 + (request.system?.utf8.count ?? 0)) { $0 + $1.content.utf8.count + 32 }
    }
}
