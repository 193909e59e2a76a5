import Foundation

/// A request as outputs and verdicts see it: its ids and state, not its payload (the prompt, often
/// kilobytes), so reading every request of a big run costs a few bytes each.
struct RequestOutline: Sendable, Equatable {
    var id: String
    var itemId: String
    var state: RequestRecord.State
    var error: String?
    var source: RequestSource

    init(id: String, itemId: String, state: RequestRecord.State, error: String?, source: RequestSource) {
        self.id = id
        self.itemId = itemId
        self.state = state
        self.error = error
        self.source = source
    }

    init(_ record: RequestRecord) {
        self.init(
            id: record.id, itemId: record.itemId, state: record.state, error: record.error,
            source: record.source)
    }
}

/// How many of a run's requests are in one state, and the first few of them.
struct StateSummary: Sendable, Equatable {
    var count = 0
    /// The first in item order (for `retrying`: the next due, then item order), as many as asked.
    var examples: [RequestOutline] = []
    /// For `retrying`: when the first is due.
    var firstDue: Date?

    /// The one a message names.
    var first: RequestOutline? { examples.first }
}

/// An item's answer from an earlier run of its job, as the job's outputs list it.
struct EarlierAnswer: Sendable, Equatable {
    var itemId: String
    /// The run that answered it.
    var runId: String
    var text: String
    var model: String
    var fromCache: Bool
    var finishReason: String
    /// `ResultRecord.citations` and `RequestRecord.sources`, as stored.
    var citations: String?
    var sources: String?
}
