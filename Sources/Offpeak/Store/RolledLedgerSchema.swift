/// What SQLite's v30 and PostgreSQL's version 22 both make of the ledger rolled up by day
/// (`LedgerRollUp`), written once for the two: the columns the covering indexes hold, and what
/// one ledger row (`NEW` or `OLD`) adds to each sum of `run_spend`, its calls counted by `calls`.
///
/// The text is frozen with those versions, as a migration's is.
enum RolledLedgerSchema {
    static let spendIndexColumns =
        "id, cache_hit, failed, unpriced, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, "
        + "dollars, naive_dollars, calls"

    static let runSpendSums: [(column: String, value: @Sendable (String) -> String)] = [
        ("calls", { "CASE WHEN NOT \($0).cache_hit THEN \($0).calls ELSE 0 END" }),
        ("input_tokens", { "\($0).input_tokens" }), ("output_tokens", { "\($0).output_tokens" }),
        ("cache_read_tokens", { "\($0).cache_read_tokens" }),
        ("cache_write_tokens", { "\($0).cache_write_tokens" }),
        ("dollars", { "\($0).dollars" }), ("naive_dollars", { "\($0).naive_dollars" }),
        ("failed_calls", { "CASE WHEN \($0).failed THEN \($0).calls ELSE 0 END" }),
        (
            "unpriced_calls",
            { "CASE WHEN \($0).unpriced AND NOT \($0).cache_hit THEN \($0).calls ELSE 0 END" }
        ),
    ]

    /// The sums `row` adds to its run's counter, after its run id.
    static func runSpendValues(_ row: String) -> String {
        (["\(row).run_id"] + runSpendSums.map { $0.value(row) }).joined(separator: ", ")
    }

    /// What a deleted or changed row (`OLD`) takes off its run's counter.
    static let runSpendSubtract =
        "UPDATE run_spend SET "
        + runSpendSums.map { "\($0.column) = \($0.column) - (\($0.value("OLD")))" }.joined(separator: ", ")
        + " WHERE run_id = OLD.run_id;"
}
