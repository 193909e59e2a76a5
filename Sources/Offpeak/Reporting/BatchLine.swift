import Foundation

/// One provider batch as `status` and `offpeak batches` show it: what the store knows, including
/// what the provider said at the last poll. Neither report calls the provider.
struct BatchLine: Sendable, Codable, Equatable {
    /// Our id (`ob…`).
    var id: String
    var job: String
    var run: String
    var provider: String
    var model: String
    /// The provider's batch id; nil while preparing (not created yet).
    var remoteId: String?
    var state: String
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

    init(_ listing: BatchListing) {
        let batch = listing.batch
        id = batch.id
        job = listing.job
        run = batch.runId
        provider = batch.provider
        model = batch.model
        remoteId = batch.remoteId
        state = batch.state.rawValue
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
    }

    /// The provider's id, or why there is none yet.
    var remoteIdCell: String { remoteId ?? (state == "preparing" ? "not created yet" : "-") }

    /// What the provider said of its state, or that it was not asked yet.
    var remoteStatusCell: String {
        remoteStatus ?? (remoteId == nil ? "-" : "not polled yet")
    }

    /// `120 of 300 done, 2 errored`, counted in provider requests as the provider counts them; before
    /// the first poll, `300 to send` (preparing) or `300 sent`.
    var progressCell: String {
        guard let counts else {
            if state == "preparing" { return "\(requests) to send" }
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
    static func time(_ date: Date?) -> String { date.map(CacheFormat.date) ?? "-" }
}
