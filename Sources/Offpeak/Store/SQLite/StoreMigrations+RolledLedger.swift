import GRDB

extension StoreMigrations {
    /// v30: the ledger rolled up by day (`LedgerRollUp`). `ledger.calls` is how many calls a row
    /// stands for (1, but on a rolled-up row), and every count of calls sums it: the covering
    /// indexes hold it after the columns they held, and `run_spend`'s triggers add it instead of 1.
    /// `runs.ledger_rolled_at` says when a pruned run's rows were rolled up; the partial index
    /// finds the pruned runs whose rows are not. `PostgresSchema.version22` is the same.
    ///
    /// The text is frozen with the migration.
    static func rollUpLedgerByDay(_ db: Database) throws {
        let columns = RolledLedgerSchema.spendIndexColumns
        let sums = RolledLedgerSchema.runSpendSums
        let values = RolledLedgerSchema.runSpendValues
        let insert = "INSERT INTO run_spend (run_id, \(sums.map(\.column).joined(separator: ", ")))"
        let merge =
            "ON CONFLICT (run_id) DO UPDATE SET "
            + sums.map { "\($0.column) = \($0.column) + excluded.\($0.column)" }.joined(separator: ", ")
        let subtract = RolledLedgerSchema.runSpendSubtract
        try db.execute(
            sql: """
                ALTER TABLE ledger ADD COLUMN calls INTEGER NOT NULL DEFAULT 1;
                ALTER TABLE runs ADD COLUMN ledger_rolled_at DATETIME;
                CREATE INDEX runs_ledger_unrolled ON runs (updated_at)
                    WHERE pruned_at IS NOT NULL AND ledger_rolled_at IS NULL;
                DROP INDEX ledger_spend_by_job;
                DROP INDEX ledger_spend_by_model;
                DROP INDEX ledger_spend_by_time;
                CREATE INDEX ledger_spend_by_job ON ledger (job, \(columns));
                CREATE INDEX ledger_spend_by_model ON ledger (model, \(columns));
                CREATE INDEX ledger_spend_by_time ON ledger (at, \(columns));
                DROP TRIGGER run_spend_insert;
                DROP TRIGGER run_spend_delete;
                DROP TRIGGER run_spend_update;
                CREATE TRIGGER run_spend_insert AFTER INSERT ON ledger WHEN NEW.run_id IS NOT NULL BEGIN
                    \(insert) VALUES (\(values("NEW"))) \(merge);
                END;
                CREATE TRIGGER run_spend_delete AFTER DELETE ON ledger WHEN OLD.run_id IS NOT NULL BEGIN
                    \(subtract)
                END;
                CREATE TRIGGER run_spend_update AFTER UPDATE OF run_id, cache_hit, failed, unpriced, input_tokens,
                    output_tokens, cache_read_tokens, cache_write_tokens, dollars, naive_dollars, calls ON ledger
                BEGIN
                    \(subtract)
                    \(insert) SELECT \(values("NEW")) WHERE NEW.run_id IS NOT NULL \(merge);
                END;
                """)
    }
}
