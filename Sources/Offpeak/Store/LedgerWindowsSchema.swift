/// What SQLite's v31 and PostgreSQL's version 23 both add, written once for the two: the price
/// window each call was billed in, what waiting for cheaper prices saved on it, and the tags of the
/// work that made it, on the ledger and on the calls in flight (`budget_reservations`, so a call
/// lost in flight keeps them); a submitted request's own tags (`requests.tags`, NULL for none, as
/// `sources`); and the partial indexes the reports over them read (`LedgerSplits`), which hold
/// every column those read, so no report reads a ledger row.
///
/// The text is frozen with those versions, as a migration's is.
enum LedgerWindowsSchema {
    /// `(table, column, SQLite type, PostgreSQL type, default)`.
    static let columns: [(table: String, column: String, sqlite: String, postgres: String, empty: String)] = [
        ("ledger", "price_window", "TEXT", "text", "''"),
        ("ledger", "tags", "TEXT", "text", "''"),
        ("ledger", "waiting_saved", "DOUBLE", "float8", "0"),
        ("budget_reservations", "price_window", "TEXT", "text", "''"),
        ("budget_reservations", "tags", "TEXT", "text", "''"),
    ]

    /// Each report over the windows reads one window at a time, through an index led by it: by
    /// job, by model, by time (days, and the whole ledger). Only calls billed in a window are in
    /// them.
    static let indexes =
        ["job", "model", "at"].map {
            """
            CREATE INDEX ledger_windowed_by_\($0 == "at" ? "time" : $0) ON ledger
                (price_window, \($0), id, cache_hit, calls, dollars) WHERE price_window <> ''
            """
        } + [
            "CREATE INDEX ledger_tagged ON ledger (tags, \(RolledLedgerSchema.spendIndexColumns)) WHERE tags <> ''",
            "CREATE INDEX ledger_waited ON ledger (id, calls, waiting_saved) WHERE waiting_saved <> 0",
        ]

    static func statements(postgres: Bool) -> [String] {
        columns.map {
            "ALTER TABLE \($0.table) ADD COLUMN \($0.column) \(postgres ? $0.postgres : $0.sqlite) "
                + "NOT NULL DEFAULT \($0.empty)"
        } + ["ALTER TABLE requests ADD COLUMN tags \(postgres ? "text" : "TEXT")"] + indexes
    }
}
