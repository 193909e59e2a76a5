import Foundation

/// Copies a whole store into another of the other engine (`offpeak store copy`): every table, row
/// for row, ids kept, the counters the triggers keep copied as they stand.
///
/// Both engines hold the same tables with the same columns (`PostgresSchema.version1` mirrors the
/// SQLite store's), so the copy works on tables, not on the roles: the source lends its rows from
/// one snapshot, chunk by chunk, and the target writes them all in one transaction (PostgreSQL) or
/// into a new file put in place at the end (SQLite), so a copy stopped halfway leaves nothing.
/// Values travel in the SQLite store's forms (`CopyValue`): booleans as 0 or 1, times as GRDB's
/// UTC text to the millisecond, which is as exact as the SQLite store keeps them.
enum StoreCopy {
    /// The tables, parents first. The last three are the counters both engines keep by triggers:
    /// the triggers count the rows as they arrive, and the counters are then replaced by the
    /// source's, so the copy holds what the source held even had a counter drifted.
    ///
    /// `limit_grants` and `claims` are left out on purpose. `claims` holds the rounds of requests
    /// the source's processes are answering now (`LeaseStore.claimRound`), which a stopped workspace
    /// has none of. `limit_grants` holds the providers' limits held in the last
    /// minute by processes of the source, and slots of calls in flight there. A copy is made with
    /// the workspace's ticks stopped, the target starts with no call in flight, and a minute later
    /// every grant would have left the window anyway; copied slots would only hold the target's
    /// first calls back until they expire.
    static let tables = [
        "runs", "requests", "shared_texts", "results", "ledger", "cache_entries", "cache_counters",
        "model_latency", "budget_reservations", "checkpoints", "leases", "deferred", "schedules",
        "spool_not_taken", "provider_batches", "batch_items", "batch_audits", "batch_fitness", "hosts",
        "job_specs", "audit_items", "audit_records", "audit_queue", "answered_items",
    ]
    static let counterTables = ["run_items", "run_spend", "cache_totals"]

    /// Rows handed from source to target at a time.
    static let chunkRows = 500

    /// What was copied: rows per table, in `tables` then `counterTables` order.
    typealias Report = [StoreCopyOutcome.Table]

    /// Copies every table of `source` into `target`, which must hold none of offpeak's rows.
    /// - Parameter schema: each table's columns and their kinds (from the PostgreSQL end).
    /// - Parameters:
    ///   - moved: what the source tells a write once the copy is done (`StoreMove.sentence`).
    ///   - placed: puts the target in place once it is written (a new SQLite file renamed); the
    ///     source is marked moved only after.
    static func copy(
        from source: any StoreCopySource, to target: any StoreCopyTarget, schema: [CopyTable], moved: String,
        placed: () throws(OffpeakError) -> Void = {}
    ) throws(OffpeakError) -> Report {
        for table in schema {
            for end in [source as any StoreCopyEnd, target] {
                let names = try end.copyColumnNames(table: table.name)
                guard Set(names) == Set(table.columns.map(\.name)) else {
                    let missing = Set(table.columns.map(\.name)).symmetricDifference(names).sorted()
                    throw OffpeakError(
                        .dataError,
                        "cannot copy table \(table.name): the two stores' columns differ "
                            + "(\(missing.joined(separator: ", "))); update offpeak on both ends")
                }
            }
        }
        if let held = try target.copyHeldTable(of: tables) {
            throw OffpeakError(
                .usage,
                "\(target.copyDescription) already holds offpeak's rows (table \(held)); copy into an empty store"
            )
        }
        // The source holds its writers off from the first row read until the copy is in place
        // and the source marked moved: what they write is in the copy, or refused.
        return try source.copySnapshot { () throws(OffpeakError) -> Report in
            let report = try target.copyWriting { () throws(OffpeakError) -> Report in
                var report = Report()
                for table in schema {
                    let counter = counterTables.contains(table.name)
                    if counter { try target.copyClear(table: table.name) }
                    var count = 0
                    try source.copyRows(of: table, chunk: chunkRows) { (rows) throws(OffpeakError) in
                        try target.copyInsert(rows, into: table)
                        count += rows.count
                    }
                    report.append(StoreCopyOutcome.Table(name: table.name, rows: count))
                }
                try target.copyFinish(schema)
                return report
            }
            try placed()
            try source.copyMarkMoved(moved)
            return report
        }
    }

    /// The tables in copy order, each with the columns `columnKinds` gives it.
    static func schema(_ columnKinds: (String) throws(OffpeakError) -> [CopyColumn]) throws(OffpeakError)
        -> [CopyTable]
    {
        var schema: [CopyTable] = []
        for name in tables + counterTables {
            schema.append(CopyTable(name: name, columns: try columnKinds(name)))
        }
        return schema
    }
}

/// One table's columns, in the order they are copied.
struct CopyTable: Sendable, Equatable {
    var name: String
    var columns: [CopyColumn]
}

struct CopyColumn: Sendable, Equatable {
    var name: String
    var kind: Kind

    /// What a column holds, as PostgreSQL types it (SQLite's types are looser).
    enum Kind: Sendable, Equatable {
        case text, integer, boolean, real, time, bytes
    }
}

/// One value on its way between the engines, in the SQLite store's form.
enum CopyValue: Sendable, Equatable {
    case null
    case text(String)
    case integer(Int64)
    case real(Double)
    case bytes([UInt8])
}

/// What both ends of a copy answer.
protocol StoreCopyEnd {
    /// The names of `table`'s columns in this store.
    func copyColumnNames(table: String) throws(OffpeakError) -> [String]
}

/// The store a copy reads.
protocol StoreCopySource: StoreCopyEnd {
    /// Runs `body` while every read sees one snapshot of the store, and every other writer waits
    /// (or is refused once it has waited too long) until it returns.
    func copySnapshot<T>(_ body: () throws(OffpeakError) -> T) throws(OffpeakError) -> T

    /// Marks the store moved (`StoreMove`), in `copySnapshot`'s transaction: from its end on,
    /// every write is refused with `sentence`.
    func copyMarkMoved(_ sentence: String) throws(OffpeakError)

    /// Hands `body` every row of `table`, at most `chunk` at a time, each row's values in the
    /// order of `table.columns`.
    func copyRows(of table: CopyTable, chunk: Int, _ body: ([[CopyValue]]) throws(OffpeakError) -> Void)
        throws(OffpeakError)
}

/// The store a copy writes.
protocol StoreCopyTarget: StoreCopyEnd {
    /// How messages name this store (never with a password).
    var copyDescription: String { get }

    /// The first of `tables` that holds a row, or nil when the store is empty.
    func copyHeldTable(of tables: [String]) throws(OffpeakError) -> String?

    /// Runs `body` so that all it writes is kept, or none of it.
    func copyWriting<T>(_ body: () throws(OffpeakError) -> T) throws(OffpeakError) -> T

    /// Deletes `table`'s rows (a counter, before the source's are copied).
    func copyClear(table: String) throws(OffpeakError)

    /// Writes `rows`, their values in the order of `table.columns`.
    func copyInsert(_ rows: [[CopyValue]], into table: CopyTable) throws(OffpeakError)

    /// After the last row: whatever the engine needs for the copied ids (PostgreSQL's identity
    /// sequences continue after them).
    func copyFinish(_ schema: [CopyTable]) throws(OffpeakError)
}
