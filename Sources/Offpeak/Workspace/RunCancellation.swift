import Foundation

/// `offpeak cancel RUN`: asks the provider to cancel the run's batches out, drops its requests not
/// yet answered, and ends the run (at once, or once a pass has collected what its batches answered:
/// that was paid for, and is kept).
public struct RunCancellation: Sendable, Codable, Equatable {
    public var run: String
    public var state: RunState
    /// Requests dropped.
    public var dropped: Int
    /// Items still in provider batches, to be collected by the next pass.
    public var inBatch: Int
    /// Provider batches asked to cancel, and those the provider could not be asked about.
    public var batchesCanceled: [String]
    public var batchErrors: [String]

    /// What the user reads.
    public var text: String {
        var lines = batchErrors.map { "warning: \($0)" }
        var line = "run \(run): \(Plural.count(dropped, "request")) dropped"
        if !batchesCanceled.isEmpty {
            line +=
                "; asked the provider to cancel \(Plural.count(batchesCanceled.count, "batch", "batches"))"
        }
        line +=
            inBatch > 0
            ? "; \(Plural.count(inBatch, "item")) in provider batches are collected by the next tick, then the run ends canceled"
            : "; the run is canceled"
        lines.append(line)
        return lines.joined(separator: "\n") + "\n"
    }
}

extension WorkspaceContext {
    /// Cancels run `runID`; refused while another process runs it.
    public func cancel(runID: String) throws(OffpeakError) -> RunCancellation {
        let host = try host()
        let store = try openStore()
        guard try store.runs.run(id: runID) != nil else {
            throw OffpeakError(.usage, "no run \(runID); `offpeak status` lists the runs")
        }
        let owner = Store.processOwner
        if let holder = try store.leases.acquireLease(runID: runID, owner: owner, host: host, ttl: 300) {
            throw OffpeakError(
                .temporaryFailure, "run \(runID) is being run by \(holder); stop it (SIGTERM), then cancel it"
            )
        }
        defer { try? store.leases.releaseLease(runID: runID, owner: owner) }
        var canceled: [String] = []
        var errors: [String] = []
        let submitted = try store.batches.batches(runID: runID).filter { $0.state == .submitted }
        if !submitted.isEmpty {
            let provider = try makeProvider()
            for batch in submitted {
                guard let remoteID = batch.remoteId, let api = provider.batches else { continue }
                do {
                    _ = try api.cancel(remoteID)
                    canceled.append(batch.id)
                    try store.batches.reschedulePoll(batchID: batch.id, next: Date())
                } catch {
                    errors.append("batch \(batch.id) (\(remoteID)) could not be canceled: \(error)")
                }
            }
        }
        let done = try store.runs.cancelRun(runID: runID, now: Date())
        return RunCancellation(
            run: runID, state: done.state, dropped: done.dropped, inBatch: done.inBatch,
            batchesCanceled: canceled,
            batchErrors: errors)
    }
}
