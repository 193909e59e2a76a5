import GRDB

/// v6: what keeps every report and every call's commit flat as the store grows (a million cache
/// entries, a hundred thousand requests, a quarter of a million ledger rows).
///
/// Indexes give each query a range to read instead of a table to scan; the ledger's cover the
/// columns a spend sums, so reports read no row. Counters that each commit needs (a run's items
/// by state, a run's spend, the cache's bytes) are kept by triggers, so no write path can forget
/// one and a commit no longer recounts the whole run or sums the whole cache (a row replaced by
/// `INSERT OR REPLACE` would slip past the delete triggers; offpeak never replaces these rows so).
/// Text here is frozen with the migration: `chunk` and `reduce` are `RequestSource.steps`
/// as of v6.
extension StoreMigrations {
    /// The columns a spend sums, after the key: `id` second keeps rows in the order they were
    /// written, so sums over the index add in the same order (and to the same double) as before.
    /// The two partial indexes on the ledger hold only cache hits and unpriced calls, and the
    /// columns their conditions name, so SQLite reads them alone (an index without them is not
    /// "covering"). The partial ones on requests leave submitted and pending rows out, so a
    /// submission writes one index more, not three; a query uses a partial index only when it
    /// spells the index's condition the same way, with literals (`Store.specOrStepSQL`).
    static let spendIndexColumns =
        "id, cache_hit, failed, unpriced, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, "
        + "dollars, naive_dollars"

    static func createScaleIndexes(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE INDEX requests_by_run_position ON requests (run_id, position);
                CREATE INDEX requests_by_run_source ON requests (run_id, source)
                WHERE source IN ('spec', 'chunk', 'reduce');
                CREATE INDEX requests_retrying ON requests (next_attempt_at) WHERE state = 'retrying';
                CREATE INDEX runs_by_created ON runs (created_at);
                CREATE INDEX runs_by_state ON runs (state, created_at);
                DROP INDEX ledger_on_job;
                DROP INDEX ledger_on_at;
                CREATE INDEX ledger_spend_by_job ON ledger (job, \(spendIndexColumns));
                CREATE INDEX ledger_spend_by_model ON ledger (model, \(spendIndexColumns));
                CREATE INDEX ledger_spend_by_time ON ledger (at, \(spendIndexColumns));
                CREATE INDEX ledger_cache_hits ON ledger (id, at, dollars, naive_dollars, cache_hit) WHERE cache_hit;
                CREATE INDEX ledger_unpriced_models ON ledger (model, unpriced, cache_hit)
                WHERE unpriced AND NOT cache_hit;
                CREATE INDEX cache_entries_by_created ON cache_entries (created_at);
                """)
    }

    /// `run_items`: per run, its requests (every source) and its items (requests that are not
    /// steps of a long item) in all, done and failed, and answered from the cache: what
    /// `Store.recountItems` counts, kept as rows change. A request's result is deleted with it
    /// (ON DELETE CASCADE) after its row is gone, so the request's own count is taken off BEFORE
    /// the delete, while its result is still there to see.
    static func createItemCounters(_ db: Database) throws {
        let item = { (row: String) in "\(row).source NOT IN ('chunk', 'reduce')" }
        let cached = { (row: String) in
            "EXISTS (SELECT 1 FROM results WHERE request_id = \(row).id AND from_cache)"
        }
        let add = """
            INSERT INTO run_items (run_id, requests, total, done, failed, cached)
            VALUES (NEW.run_id, 1, \(item("NEW")), \(item("NEW")) AND NEW.state = 'done',
                \(item("NEW")) AND NEW.state = 'failed', \(item("NEW")) AND \(cached("NEW")))
            ON CONFLICT (run_id) DO UPDATE SET requests = requests + excluded.requests,
                total = total + excluded.total, done = done + excluded.done,
                failed = failed + excluded.failed, cached = cached + excluded.cached;
            """
        let subtract = """
            UPDATE run_items SET requests = requests - 1, total = total - (\(item("OLD"))),
                done = done - (\(item("OLD")) AND OLD.state = 'done'),
                failed = failed - (\(item("OLD")) AND OLD.state = 'failed'),
                cached = cached - (\(item("OLD")) AND \(cached("OLD")))
            WHERE run_id = OLD.run_id;
            """
        let itemRun = { (row: String) in
            "(SELECT run_id FROM requests WHERE id = \(row).request_id AND \(item("requests")))"
        }
        try db.execute(
            sql: """
                CREATE TABLE run_items (
                    run_id TEXT PRIMARY KEY NOT NULL, requests INTEGER NOT NULL DEFAULT 0,
                    total INTEGER NOT NULL DEFAULT 0, done INTEGER NOT NULL DEFAULT 0,
                    failed INTEGER NOT NULL DEFAULT 0, cached INTEGER NOT NULL DEFAULT 0);
                INSERT INTO run_items (run_id, requests, total, done, failed, cached)
                SELECT requests.run_id, COUNT(*), COUNT(*) FILTER (WHERE \(item("requests"))),
                    COUNT(*) FILTER (WHERE \(item("requests")) AND requests.state = 'done'),
                    COUNT(*) FILTER (WHERE \(item("requests")) AND requests.state = 'failed'),
                    COUNT(*) FILTER (WHERE \(item("requests")) AND results.from_cache)
                FROM requests LEFT JOIN results ON results.request_id = requests.id
                GROUP BY requests.run_id;
                CREATE TRIGGER run_items_insert AFTER INSERT ON requests BEGIN \(add) END;
                CREATE TRIGGER run_items_delete BEFORE DELETE ON requests BEGIN \(subtract) END;
                CREATE TRIGGER run_items_update AFTER UPDATE OF id, run_id, source, state ON requests
                BEGIN \(subtract) \(add) END;
                CREATE TRIGGER run_items_result_insert AFTER INSERT ON results WHEN NEW.from_cache BEGIN
                    UPDATE run_items SET cached = cached + 1 WHERE run_id = \(itemRun("NEW"));
                END;
                CREATE TRIGGER run_items_result_delete AFTER DELETE ON results WHEN OLD.from_cache BEGIN
                    UPDATE run_items SET cached = cached - 1 WHERE run_id = \(itemRun("OLD"));
                END;
                CREATE TRIGGER run_items_result_update AFTER UPDATE OF request_id, from_cache ON results BEGIN
                    UPDATE run_items SET cached = cached - 1 WHERE OLD.from_cache AND run_id = \(itemRun("OLD"));
                    UPDATE run_items SET cached = cached + 1 WHERE NEW.from_cache AND run_id = \(itemRun("NEW"));
                END;
                CREATE TRIGGER run_items_run_delete AFTER DELETE ON runs BEGIN
                    DELETE FROM run_items WHERE run_id = OLD.id;
                END;
                """)
    }

    /// `run_spend`: per run, what `Store.spendColumns` sums over its ledger rows, added as each row
    /// is written (in the order of `id`, so the dollars add up to the very double the sum gave).
    /// offpeak never changes or deletes a ledger row; if something else does, the counter follows,
    /// to within the rounding of taking a double back off.
    static func createSpendCounters(_ db: Database) throws {
        // Each sum's column, and what one ledger row (`NEW` or `OLD`) adds to it.
        let sums: [(column: String, value: (String) -> String)] = [
            ("calls", { "CASE WHEN NOT \($0).cache_hit THEN 1 ELSE 0 END" }),
            ("input_tokens", { "\($0).input_tokens" }), ("output_tokens", { "\($0).output_tokens" }),
            ("cache_read_tokens", { "\($0).cache_read_tokens" }),
            ("cache_write_tokens", { "\($0).cache_write_tokens" }),
            ("dollars", { "\($0).dollars" }), ("naive_dollars", { "\($0).naive_dollars" }),
            ("failed_calls", { "CASE WHEN \($0).failed THEN 1 ELSE 0 END" }),
            ("unpriced_calls", { "CASE WHEN \($0).unpriced AND NOT \($0).cache_hit THEN 1 ELSE 0 END" }),
        ]
        let values = { (row: String) in
            (["\(row).run_id"] + sums.map { $0.value(row) }).joined(separator: ", ")
        }
        let insert = "INSERT INTO run_spend (run_id, \(sums.map(\.column).joined(separator: ", ")))"
        let merge =
            "ON CONFLICT (run_id) DO UPDATE SET "
            + sums.map { "\($0.column) = \($0.column) + excluded.\($0.column)" }.joined(separator: ", ")
        let subtract =
            "UPDATE run_spend SET "
            + sums.map { "\($0.column) = \($0.column) - (\($0.value("OLD")))" }.joined(separator: ", ")
            + " WHERE run_id = OLD.run_id;"
        try db.execute(
            sql: """
                CREATE TABLE run_spend (
                    run_id TEXT PRIMARY KEY NOT NULL, calls INTEGER NOT NULL DEFAULT 0,
                    input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0,
                    cache_read_tokens INTEGER NOT NULL DEFAULT 0, cache_write_tokens INTEGER NOT NULL DEFAULT 0,
                    dollars REAL NOT NULL DEFAULT 0, naive_dollars REAL NOT NULL DEFAULT 0,
                    failed_calls INTEGER NOT NULL DEFAULT 0, unpriced_calls INTEGER NOT NULL DEFAULT 0);
                \(insert) SELECT \(values("ledger")) FROM ledger WHERE ledger.run_id IS NOT NULL
                ORDER BY ledger.id \(merge);
                CREATE TRIGGER run_spend_insert AFTER INSERT ON ledger WHEN NEW.run_id IS NOT NULL BEGIN
                    \(insert) VALUES (\(values("NEW"))) \(merge);
                END;
                CREATE TRIGGER run_spend_delete AFTER DELETE ON ledger WHEN OLD.run_id IS NOT NULL BEGIN
                    \(subtract)
                END;
                CREATE TRIGGER run_spend_update AFTER UPDATE OF run_id, cache_hit, failed, unpriced, input_tokens,
                    output_tokens, cache_read_tokens, cache_write_tokens, dollars, naive_dollars ON ledger
                BEGIN
                    \(subtract)
                    \(insert) SELECT \(values("NEW")) WHERE NEW.run_id IS NOT NULL \(merge);
                END;
                """)
    }

    /// The triggers that keep `cache_totals`, made by v6 and again by v25 with the table they watch.
    static let cacheTotalsTriggers = """
        CREATE TRIGGER cache_totals_insert AFTER INSERT ON cache_entries BEGIN
            UPDATE cache_totals SET entries = entries + 1, raw_bytes = raw_bytes + NEW.raw_bytes,
                stored_bytes = stored_bytes + NEW.stored_bytes WHERE id = 1;
        END;
        CREATE TRIGGER cache_totals_delete AFTER DELETE ON cache_entries BEGIN
            UPDATE cache_totals SET entries = entries - 1, raw_bytes = raw_bytes - OLD.raw_bytes,
                stored_bytes = stored_bytes - OLD.stored_bytes WHERE id = 1;
        END;
        CREATE TRIGGER cache_totals_update AFTER UPDATE OF raw_bytes, stored_bytes ON cache_entries BEGIN
            UPDATE cache_totals SET raw_bytes = raw_bytes - OLD.raw_bytes + NEW.raw_bytes,
                stored_bytes = stored_bytes - OLD.stored_bytes + NEW.stored_bytes WHERE id = 1;
        END;
        """

    /// `cache_totals`: one row with the cache's entries and bytes, so saving an answer (which evicts
    /// past the size cap) and `cache stats` read three numbers instead of summing a million rows.
    static func createCacheTotals(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE cache_totals (
                    id INTEGER PRIMARY KEY NOT NULL CHECK (id = 1), entries INTEGER NOT NULL,
                    raw_bytes INTEGER NOT NULL, stored_bytes INTEGER NOT NULL);
                INSERT INTO cache_totals (id, entries, raw_bytes, stored_bytes)
                SELECT 1, COUNT(*), COALESCE(SUM(raw_bytes), 0), COALESCE(SUM(stored_bytes), 0)
                FROM cache_entries;
                \(cacheTotalsTriggers)
                """)
    }
}
