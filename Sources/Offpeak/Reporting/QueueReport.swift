import Foundation

/// What `offpeak queue` shows: the deferred queue (work held back by its conditions, with each
/// reason, the host whose conditions they are, and since when), items waiting to be retried,
/// entries of spool folders that are not taken (and why), and the conditions as read now.
public struct QueueReport: Sendable, Encodable {
    struct Entry: Sendable, Encodable, Equatable {
        var job: String
        var run: String?
        var reasons: [String]
        /// The host whose conditions gave `reasons` (the last to defer the job); nil, left out of
        /// `--json` and `-` in the text, for work deferred before hosts were recorded.
        var host: String?
        var deferredAt: Date
        var checkedAt: Date
        /// Items of the run not answered yet (0 when the run has not planned its items yet).
        var itemsWaiting: Int
        /// Of those, items out in a provider batch (being answered, not held back).
        var itemsInBatch = 0
    }

    struct Retry: Sendable, Encodable, Equatable {
        var job: String
        var run: String
        var item: String
        var attempts: Int
        var nextAttemptAt: Date?
        var error: String?
    }

    /// An entry of a spool folder that intake leaves where it is (a folder, a link, a named pipe,
    /// a file it cannot read), until it is removed or becomes a regular file.
    struct NotTaken: Sendable, Encodable, Equatable {
        var job: String
        /// Its path in the workspace as it is: `spool/inbox/notes`; the text table writes its
        /// control characters out, `--json` escapes them as JSON does.
        var entry: String
        var why: String
        /// When a tick (or run) first found it.
        var since: Date
    }

    var deferred: [Entry]
    var retrying: [Retry]
    var notTaken: [NotTaken]
    /// Provider batches whose polls keep failing (`BatchLine.isFailing`): their items wait for a
    /// fix, asked about at every poll.
    var failingBatches: [BatchLine] = []
    /// The conditions now, in one line ("on battery (42 %); online, metered (wwan0)").
    var now: String?

    public static func make(store: Store, conditions: MachineConditions?) throws(OffpeakError) -> QueueReport
    {
        var entries: [Entry] = []
        for record in try store.schedules.deferred() {
            let run = try record.runId.flatMap { id throws(OffpeakError) in try store.runs.readableRun(id: id)
            }
            let inBatch =
                try run.map { run throws(OffpeakError) in try store.batches.requestsInBatch(runID: run.id) }
                ?? 0
            entries.append(
                Entry(
                    job: record.job, run: record.runId, reasons: record.reasonList,
                    host: record.host.isEmpty ? nil : record.host, deferredAt: record.deferredAt,
                    checkedAt: record.checkedAt,
                    itemsWaiting: run.map { max(0, $0.itemsTotal - $0.itemsDone - $0.itemsFailed) } ?? 0,
                    itemsInBatch: inBatch))
        }
        let retrying = try store.runs.retryingRequests().map { request in
            Retry(
                job: request.job, run: request.runId, item: request.itemId, attempts: request.attempts,
                nextAttemptAt: request.nextAttemptAt, error: request.error)
        }
        let notTaken = try store.schedules.notTaken().map { record in
            NotTaken(job: record.job, entry: record.entry, why: record.reason, since: record.noticedAt)
        }
        return QueueReport(
            deferred: entries, retrying: retrying, notTaken: notTaken,
            failingBatches: try store.batches.batchListings(all: false).map(BatchLine.init).filter(
                \.isFailing),
            now: conditions.map(\.summary))
    }

    public var text: String {
        var out = ""
        if let now { out += "now: \(now)\n" }
        if deferred.isEmpty {
            out += "deferred: nothing\n"
        } else {
            let table = TextTable(columns: ["JOB", "RUN", "WAITING", "SINCE", "CHECKED", "HOST", "WHY"])
            for entry in deferred {
                table.add([
                    entry.job, entry.run ?? "-",
                    "\(entry.itemsWaiting)"
                        + (entry.itemsInBatch > 0 ? " (\(entry.itemsInBatch) in a provider batch)" : ""),
                    Timestamp.text(entry.deferredAt),
                    Timestamp.text(entry.checkedAt), entry.host ?? "-", entry.reasons.joined(separator: "; "),
                ])
            }
            out += table.render()
        }
        if !retrying.isEmpty {
            out += "\nretrying:\n"
            let table = TextTable(columns: ["JOB", "ITEM", "ATTEMPTS", "WHY"])
            for retry in retrying {
                table.add([
                    retry.job, ReadableText.escaped(retry.item), "\(retry.attempts)", retry.error ?? "",
                ])
            }
            out += table.render()
        }
        if !notTaken.isEmpty {
            out += "\nnot taken from spool folders (remove them, or make them regular files):\n"
            let table = TextTable(columns: ["JOB", "ENTRY", "SINCE", "WHY"])
            for entry in notTaken {
                table.add([
                    entry.job, ReadableText.escaped(entry.entry), Timestamp.text(entry.since), entry.why,
                ])
            }
            out += table.render()
        }
        return out + BatchLine.failingText(failingBatches)
    }
}
