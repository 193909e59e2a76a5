import Foundation
import Logging

/// The batch lane (DESIGN.md, lever 4): calls that can wait go to the provider's batch API at half
/// price, submitted in one pass and collected in a later one.
///
/// Never lost, never paid twice: a batch is committed `preparing` (its requests `in_batch`) before
/// the call that creates it, and the provider's id right after; a batch still `preparing` when a
/// pass starts was created or not, and the provider is asked which (`reconcile`) before anything
/// is sent again. Each provider request's result is booked once, with its ledger row, in one
/// transaction (`Store.commitBatchCall`): collecting the same results again books nothing.
extension RunSession {
    /// Reconciles the run's batches never recorded, asks about those due a poll, and books the
    /// ones that ended.
    mutating func settleBatches(_ api: any BatchAPI) throws(OffpeakError) {
        let store = context.store
        for batch in try store.batches.batches(runID: run.id) where batch.state == .preparing {
            try reconcile(batch, api: api)
        }
        let now = Date()
        for batch in try store.batches.batches(runID: run.id)
        where batch.state == .submitted || batch.state == .ended {
            guard let due = batch.nextPollAt, due <= now else { continue }
            if options.stop?.isRequested == true { return }
            try poll(batch, api: api)
        }
    }

    /// When the run's next batch poll is due, if a batch of it is still out.
    func nextBatchPoll() throws(OffpeakError) -> Date? {
        try context.store.batches.batches(runID: run.id).filter(\.isOpen).compactMap { batch in
            batch.state == .preparing ? Date() + 5 : batch.nextPollAt
        }.min()
    }

    /// Finds out whether a batch committed but never recorded was created: found, it is recorded
    /// and collected like any other; absent, its requests go again; undecided, a later pass asks.
    private func reconcile(_ batch: BatchRecord, api: any BatchAPI) throws(OffpeakError) {
        let store = context.store
        let search = BatchSearch(
            label: batch.id, customIDPrefix: batch.id + "_", requestCount: batch.requests,
            preparedAt: batch.preparedAt, createdBy: batch.preparedAt + BatchLane.createdWithin,
            known: try store.batches.knownRemoteIDs())
        let finding: BatchSearch.Finding
        do { finding = try api.find(search) } catch {
            context.logger.warning(
                "batch \(batch.id): could not ask the provider whether it exists: \(error)")
            return
        }
        switch finding {
        case .found(let remote):
            context.logger.info(
                "batch \(batch.id) was created as \(remote.id) before it could be recorded: collecting it, not sending it again"
            )
            let now = Date()
            try store.batches.recordSubmitted(
                batchID: batch.id, remoteID: remote.id, now: remote.createdAt ?? now, nextPoll: now)
        case .absent:
            try store.batches.abandonPreparing(
                batchID: batch.id, reason: "never created at the provider", now: Date())
        case .undecided(let why):
            context.logger.info("batch \(batch.id): \(why); a later pass looks again")
        }
    }

    /// Asks the provider about a batch; one that ended is collected.
    private mutating func poll(_ batch: BatchRecord, api: any BatchAPI) throws(OffpeakError) {
        guard let remoteID = batch.remoteId else { return }
        let store = context.store
        let remote: RemoteBatch
        do { remote = try api.retrieve(remoteID) } catch {
            try pollFailed(batch, error, doing: "could not ask the provider (\(remoteID))")
            return
        }
        let now = Date()
        try store.batches.recordPoll(
            batchID: batch.id, status: remote.status, counts: remote.counts, expiresAt: remote.expiresAt,
            next: BatchLane.nextPoll(submittedAt: batch.submittedAt, now: now))
        guard remote.phase == .ended else {
            if batch.pollFailures > 0 { try store.batches.clearPollFailures(batchID: batch.id) }
            return
        }
        try store.batches.markEnded(batchID: batch.id, now: now)
        try collect(batch, remote, api: api)
    }

    /// Books every result of an ended batch, matched by custom id: answers with their ledger rows
    /// at batch prices, refused requests failed, the rest (errored, expired, canceled, missing)
    /// back to pending to go again. A result already booked is skipped.
    private mutating func collect(_ batch: BatchRecord, _ remote: RemoteBatch, api: any BatchAPI)
        throws(OffpeakError)
    {
        let store = context.store
        var calls: [String: PlannedCall] = [:]
        var unreadable: [String: String] = [:]
        let planner = batchPlanner(model: batch.model)
        for (customID, records) in try store.batches.batchCalls(batchID: batch.id) {
            do {
                let requests = try records.map { ($0, try $0.completionRequest()) }
                calls[customID] = planner.call(carrying: requests)
            } catch {
                unreadable[customID] = "stored request unreadable: \(error)"
            }
        }
        // The batch audit's requests, each the item asked alone (`RunSession+BatchAudit`); one
        // whose stored request is unreadable is matched to no result, and booked as errored.
        let audits = try store.batches.batchAudits(batchID: batch.id)
        var sent = calls.mapValues(\.request)
        for (audit, record) in audits {
            sent[audit.customId] = try? record.completionRequest()
        }
        var results: [BatchResult] = []
        if remote.failure == nil {
            do { results = try api.results(of: remote, requests: sent) } catch {
                try pollFailed(batch, error, doing: "its results could not be fetched")
                return
            }
        }
        if batch.pollFailures > 0 { try store.batches.clearPollFailures(batchID: batch.id) }
        let price = context.prices.cost(of: batch.model, at: context.clock())
        var seen = Set<String>()
        var receipts: [(customID: String, receipt: BatchReceipt)] = []
        var audited: [String: BatchResult.Outcome] = [:]
        for result in results {
            if sent[result.customID] != nil, calls[result.customID] == nil {
                audited[result.customID] = audited[result.customID] ?? result.outcome
                continue
            }
            guard let call = calls[result.customID], seen.insert(result.customID).inserted else {
                if calls[result.customID] == nil {
                    context.logger.warning(
                        "batch \(batch.id): a result for unknown custom id \(result.customID)")
                }
                continue
            }
            receipts.append(
                (result.customID, receipt(result.outcome, call: call, price: price, batch: batch)))
        }
        let missing =
            remote.failure.map { "the provider refused the batch: \($0)" }
            ?? "no result for it in the provider batch (\(remote.status))"
        for (customID, call) in calls where !seen.contains(customID) {
            receipts.append((customID, BatchReceipt(booking: again(.errored, reason: missing, call: call))))
        }
        for (customID, why) in unreadable {
            receipts.append((customID, BatchReceipt(booking: .refused(why))))
        }
        // Booked a few hundred results a transaction, each custom id whole and once; a stop signal
        // between two leaves the batch `ended`, and the next pass books the rest.
        var start = 0
        while start < receipts.count {
            if let stop = options.stop, stop.isRequested { return }
            let chunk = receipts[start..<min(receipts.count, start + BatchLane.resultsPerCommit)]
            start += chunk.count
            let booked = try store.batches.commitBatchCalls(
                batchID: batch.id, chunk.map { ($0.customID, $0.receipt.booking) }, run: run,
                lease: context.lease, now: Date())
            for (customID, receipt) in chunk where booked.contains(customID) {
                tally.answeredNow += receipt.itemsAnswered
                saveToCache(receipt.cacheEntries)
            }
        }
        var answers: [String: String] = [:]
        for (_, receipt) in receipts {
            for result in receipt.booking.results where !result.requestId.isEmpty {
                answers[result.requestId] = result.text
            }
        }
        guard try settleBatchAudits(batch, audits, results: audited, answers: answers) else { return }
        try reaskOversized(model: batch.model)
        try store.batches.markCollected(batchID: batch.id, now: Date())
        run = try store.runs.run(id: run.id) ?? run
        context.logger.info(
            "collected batch \(batch.id) (\(remote.id)): \(remote.counts.succeeded) of \(batch.requests) requests answered"
        )
    }

    /// A poll that failed: asked again at the next poll either way (the items were paid for, and
    /// nothing is dropped); a failure that is not transient (a 4xx, a results URL that is not one,
    /// results that cannot be read) is also counted and its reason kept, redacted, for `status`,
    /// `batches` and `queue` (`BatchRecord.failuresShown`).
    private func pollFailed(_ batch: BatchRecord, _ error: ProviderError, doing what: String)
        throws(OffpeakError)
    {
        let store = context.store
        let reason = context.provider.redactor.redact(error.description)
        let next = BatchLane.nextPoll(submittedAt: batch.submittedAt, now: Date())
        if error.isTransient {
            context.logger.warning("batch \(batch.id): \(what): \(reason); asking again at the next poll")
            try store.batches.reschedulePoll(batchID: batch.id, next: next)
        } else {
            let times = Plural.count(batch.pollFailures + 1, "time")
            context.logger.warning(
                "batch \(batch.id): \(what) (\(times) in a row): \(reason); asking again at the next poll")
            try store.batches.recordPollFailure(batchID: batch.id, reason: reason, next: next)
        }
    }

    /// What one provider request's result books, and what it adds to the pass and the cache.
    struct BatchReceipt {
        var booking: BatchBooking
        var itemsAnswered = 0
        var cacheEntries: [(key: String, answer: CachedAnswer)] = []
    }

    /// What one result books, built as a live answer's is (`CallReceipt`) at batch prices.
    private func receipt(
        _ outcome: BatchResult.Outcome, call: PlannedCall, price: ModelPrice?, batch: BatchRecord
    ) -> BatchReceipt {
        switch outcome {
        case .succeeded(let response):
            let receipt = CallReceipt.answered(
                call, response: response, price: price, line: ledgerLine,
                started: batch.submittedAt ?? batch.preparedAt, now: Date(), lane: .batch)
            if let answer = receipt.batchedAnswer { learn(from: answer, model: call.request.model) }
            var booking = BatchBooking.answered(ledger: receipt.ledger, results: receipt.results)
            booking.failed = receipt.failed
            booking.againReason = receipt.retry.first?.reason ?? booking.againReason
            return BatchReceipt(
                booking: booking, itemsAnswered: receipt.itemsAnswered, cacheEntries: receipt.cacheEntries)
        case .invalid(let message):
            return BatchReceipt(booking: .refused("the provider refused the request: \(message)"))
        case .errored(let message):
            return BatchReceipt(
                booking: again(.errored, reason: "the provider batch failed it: \(message)", call: call))
        case .expired:
            return BatchReceipt(
                booking: again(.expired, reason: "the provider batch expired before answering it", call: call)
            )
        case .canceled:
            return BatchReceipt(
                booking: again(
                    .canceled, reason: "the provider batch was canceled before answering it", call: call))
        }
    }

    /// The call's items go again, except those that have had all the job's attempts: they fail.
    private func again(_ outcome: BatchItemRecord.Outcome, reason: String, call: PlannedCall)
        -> BatchBooking
    {
        var booking = BatchBooking.again(outcome, reason: reason)
        booking.failed = call.requests.filter { $0.attempts + 1 >= spec.maxAttempts }.map {
            ($0.id, "\(reason) (after \(Plural.count($0.attempts + 1, "attempt")))")
        }
        return booking
    }

    /// The planner the run's calls are made with, so a batched prompt is read against the call sent.
    /// A batch-lane pass packs up to `BatchLane.mostItems` items a prompt unless the spec sets
    /// `batching.max_items`; a model whose batched answers fare badly gets fewer (`BatchFitness`).
    func batchPlanner(model: String) -> BatchPlanner {
        let fitness = fitness(of: model)
        return CallPlanning.batchPlanner(
            spec: spec, model: model, prices: context.prices, batchLane: lanes.batchAPI != nil,
            fitness: fitness,
            auditLimit: audits ? auditRecord(of: model)?.itemLimit(at: Date()) : nil,
            form: answerForm(fitness: fitness), now: Date())
    }
}
