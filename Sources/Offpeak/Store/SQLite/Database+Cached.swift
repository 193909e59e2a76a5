import GRDB

/// Statements the SQLite engine runs again and again, compiled once per connection.
///
/// Compiling a statement is most of what a short one costs: SQLite parses it and codes every
/// trigger it fires into its program (the counters' triggers on `requests`, `ledger`,
/// `cache_entries`), and GRDB's authorizer is called for each column that program reads. A call's
/// commit ran a dozen such statements, one per answered item among them: recompiling them was
/// about a tenth of a run's CPU (perf on `offpeak run`, issue 45). GRDB keeps compiled statements by
/// their text; a text with many values (a long `IN` list, whose text changes with its length) is
/// compiled each time instead, so the cache cannot grow with every list length.
extension Database {
    /// How many values a statement may have and still be kept compiled.
    static let cachedValuesLimit = 32

    /// Runs `sql`, a statement of fixed text that returns no rows, compiled once per connection.
    func run(_ sql: String, _ arguments: StatementArguments = StatementArguments()) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }

    /// The compiled `sql` with `values` values: kept by GRDB when they are few, else made for
    /// this once.
    func statement(_ sql: String, values: Int) throws -> Statement {
        values <= Self.cachedValuesLimit ? try cachedStatement(sql: sql) : try makeStatement(sql: sql)
    }
}
