/// The states the engines' queries name, written from the Swift enums, so no query spells a state
/// by hand and renaming a case cannot leave a query matching nothing: SQLite's inline them, and
/// PostgreSQL's where a literal list lets the server use a partial index (`state IN (...)`).
/// (The migrations keep the literals they were written with: a migration is history and never
/// changes.)
enum SQLStates {
    /// A request's state as an SQL literal: `'in_batch'`.
    static func request(_ state: RequestRecord.State) -> String { "'\(state.rawValue)'" }

    /// A provider batch's state as an SQL literal: `'preparing'`.
    static func batch(_ state: BatchRecord.State) -> String { "'\(state.rawValue)'" }

    /// A list for `IN`: `('pending', 'retrying')`.
    static func requests(_ states: RequestRecord.State...) -> String {
        "(" + states.map(request).joined(separator: ", ") + ")"
    }

    static func batches(_ states: BatchRecord.State...) -> String {
        "(" + states.map(batch).joined(separator: ", ") + ")"
    }

    /// Requests a planning round may take: pending, or retrying once due.
    static let plannable = requests(.pending, .retrying)
    /// Requests not finished and not out in a provider batch.
    static let unsent = requests(.pending, .retrying, .waiting)
    /// Requests not finished: to be sent, or out in a provider batch (what retention never prunes).
    static let unfinished = requests(.pending, .retrying, .waiting, .inBatch)
    /// Provider batches not yet collected or failed: preparing, submitted or ended.
    static let openBatches = batches(.preparing, .submitted, .ended)
}
