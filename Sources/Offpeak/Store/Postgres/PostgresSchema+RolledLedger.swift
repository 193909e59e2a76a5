extension PostgresSchema {
    /// Version 22: the ledger rolled up by day (`LedgerRollUp`), as SQLite's v30: `ledger.calls`,
    /// how many calls a row stands for, held by the covering indexes and added by `run_spend`'s
    /// triggers instead of 1; `runs.ledger_rolled_at`, and the partial index finding the pruned runs
    /// whose rows are not rolled up yet.
    ///
    /// The text is frozen with the version, as a migration's is.
    static let version22: [String] = {
        let columns =
            "id, cache_hit, failed, unpriced, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, "
            + "dollars, naive_dollars, calls"
        // Each sum of `run_spend`, and what one ledger row (`NEW` or `OLD`) adds to it.
        let sums: [(column: String, value: (String) -> String)] = [
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
        let insert = "INSERT INTO run_spend AS s (run_id, \(sums.map(\.column).joined(separator: ", ")))"
        let merge =
            "ON CONFLICT (run_id) DO UPDATE SET "
            + sums.map { "\($0.column) = s.\($0.column) + excluded.\($0.column)" }.joined(separator: ", ")
        let values = { (row: String) in
            (["\(row).run_id"] + sums.map { $0.value(row) }).joined(separator: ", ")
        }
        let subtract =
            "UPDATE run_spend SET "
            + sums.map { "\($0.column) = \($0.column) - (\($0.value("OLD")))" }.joined(separator: ", ")
            + " WHERE run_id = OLD.run_id;"
        let function = { (name: String, body: String) in
            """
            CREATE OR REPLACE FUNCTION \(name)() RETURNS trigger LANGUAGE plpgsql AS $body$
            BEGIN
            \(body)
            RETURN NULL;
            END
            $body$
            """
        }
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
            function("offpeak_run_spend_insert", "\(insert) VALUES (\(values("NEW"))) \(merge);"),
            function("offpeak_run_spend_delete", subtract),
            function(
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
