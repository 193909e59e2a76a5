extension PostgresSchema {
    /// Version 22: the ledger rolled up by day (`LedgerRollUp`), as SQLite's v30: `ledger.calls`,
    /// how many calls a row stands for, held by the covering indexes and added by `run_spend`'s
    /// triggers instead of 1; `runs.ledger_rolled_at`, and the partial index finding the pruned runs
    /// whose rows are not rolled up yet.
    ///
    /// The text is frozen with the version, as a migration's is.
    static let version22: [String] = {
        let columns = RolledLedgerSchema.spendIndexColumns
        let sums = RolledLedgerSchema.runSpendSums
        let insert = "INSERT INTO run_spend AS s (run_id, \(sums.map(\.column).joined(separator: ", ")))"
        let merge =
            "ON CONFLICT (run_id) DO UPDATE SET "
            + sums.map { "\($0.column) = s.\($0.column) + excluded.\($0.column)" }.joined(separator: ", ")
        let values = RolledLedgerSchema.runSpendValues
        let subtract = RolledLedgerSchema.runSpendSubtract
        return [
            "ALTER TABLE ledger ADD COLUMN calls bigint NOT NULL DEFAULT 1",
            "ALTER TABLE runs ADD COLUMN ledger_rolled_at timestamptz",
            """
            CREATE INDEX runs_ledger_unrolled ON runs (updated_at)
                WHERE pruned_at IS NOT NULL AND ledger_rolled_at IS NULL
            """,
            "DROP INDEX ledger_spend_by_job",
            "DROP INDEX ledger_spend_by_model",
            "DROP INDEX ledger_spend_by_time",
            "CREATE INDEX ledger_spend_by_job ON ledger (job, \(columns))",
            "CREATE INDEX ledger_spend_by_model ON ledger (model, \(columns))",
            "CREATE INDEX ledger_spend_by_time ON ledger (at, \(columns))",
            replace("offpeak_run_spend_insert", "\(insert) VALUES (\(values("NEW"))) \(merge);"),
            replace("offpeak_run_spend_delete", subtract),
            replace(
                "offpeak_run_spend_update",
                "IF OLD.run_id IS NOT NULL THEN \(subtract) END IF;\n"
                    + "IF NEW.run_id IS NOT NULL THEN \(insert) VALUES (\(values("NEW"))) \(merge); END IF;"),
            "DROP TRIGGER IF EXISTS run_spend_update ON ledger",
            """
            CREATE TRIGGER run_spend_update AFTER UPDATE OF run_id, cache_hit, failed, unpriced, input_tokens,
                output_tokens, cache_read_tokens, cache_write_tokens, dollars, naive_dollars, calls ON ledger
            FOR EACH ROW EXECUTE FUNCTION offpeak_run_spend_update()
            """,
        ]
    }()
}
