import Foundation

/// One provider batch as `status` and `offpeak batches` show it: what the store knows, including
/// what the provider said at the last poll. Neither report calls the provider.
struct BatchLine: Sendable, Codable, Equatable {
    /// Our id (`ob…`).
    var id: String
    var job: String
    var run: String
    /// The host that sent the batch; nil (left out of `--json`, `-` in the text) for batches sent
    /// before hosts were recorded.
    var host: String?
    var provider: String
    var model: String
    /// The provider's batch id; nil while preparing (not created yet).
    var remoteId: String?
    var state: BatchRecord.State
    /// The provider's own word for its state at the last poll; nil before the first.
    var remoteStatus: String?
    /// Provider requests in the batch, and the items they carry (a batched prompt carries several).
    var requests: Int
    var items: Int
    var counts: RemoteBatch.Counts?
    var worstDollars: Double
    var preparedAt: Date
    var submittedAt: Date?
    var expiresAt: Date?
    var endedAt: Date?
    var collectedAt: Date?
    var polls: Int
    var error: String?
    /// Polls in a row that failed for a reason that is not transient, and the last reason
    /// (redacted); nil (left out of `--json`) while the polls go through.
    var pollFailures: Int?
    var pollError: String?

    init(_ listing: BatchListing) {
        let batch = listing.batch
        id = batch.id
        job = listing.job
        run = batch.runId
        host = batch.host.isEmpty ? nil : batch.host
        provider = batch.provider
        model = batch.model
        remoteId = batch.remoteId
        state = batch.state
        remoteStatus = batch.remoteStatus
        requests = batch.requests
        items = batch.items
        counts = batch.counts
        worstDollars = batch.worstDollars
        preparedAt = batch.preparedAt
        submittedAt = batch.submittedAt
        expiresAt = batch.expiresAt
        endedAt = batch.endedAt
        collectedAt = batch.collectedAt
        polls = batch.polls
        error = batch.error
        pollFailures = batch.pollFailures > 0 ? batch.pollFailures : nil
        pollError = batch.pollError
    }

    /// The most of a reason the text shows; `--json` has it whole.
    static let reasonWidth = 400

    /// Whether the batch is out and its polls failed `BatchRecord.failuresShown` times in a row.
    var isFailing: Bool {
        (pollFailures ?? 0) >= BatchRecord.failuresShown
            && [.preparing, .submitted, .ended].contains(state)
    }

    /// The batches of `lines` whose polls keep failing, with why, as `status`, `batches` and
    /// `queue` end; nothing when none does.
    static func failingText(_ lines: [BatchLine]) -> String {
        let failing = lines.filter(\.isFailing)
        guard !failing.isEmpty else { return "" }
        let table = TextTable(columns: ["BATCH", "RUN", "PROVIDER ID", "FAILED", "WHY"])
        for line in failing {
            table.add([
                line.id, line.run, line.remoteIdCell, Plural.count(line.pollFailures ?? 0, "time"),
                TextTable.shortened(TextTable.oneLine(line.pollError ?? ""), to: reasonWidth),
            ])
        }
        return "\nprovider batches not collected, their polls failing (asked again at every poll; "
            + "nothing is dropped):\n" + table.render()
    }

    /// The provider's id, or why there is none yet.
    var remoteIdCell: String { remoteId ?? (state == .preparing ? "not created yet" : "-") }

    /// What the provider said of its state, or that it was not asked yet.
    var remoteStatusCell: String {
        remoteStatus ?? (remoteId == nil ? "-" : "not polled yet")
    }

    /// `120 of 300 done, 2 errored`, counted in provider requests as the provider counts them; before
    /// the first poll, `300 to send` (preparing) or `300 sent`.
    var progressCell: String {
        guard let counts else {
            if state == .preparing { return "\(requests) to send" }
            return remoteId == nil ? "-" : "\(requests) sent"
        }
        let done = counts.succeeded + counts.errored + counts.canceled + counts.expired
        var text = "\(done) of \(max(requests, done + counts.processing)) done"
        for (count, word) in [
            (counts.errored, "errored"), (counts.expired, "expired"), (counts.canceled, "canceled"),
        ]
        where count > 0 {
            text += ", \(count) \(word)"
        }
        return text
    }

    /// Local time to the minute, or `-`.
    static func time(_ date: Date?) -> String { date.map(ReportFormat.date) ?? "-" }
}
