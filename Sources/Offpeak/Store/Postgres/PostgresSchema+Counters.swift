/// Version 2 of the PostgreSQL store: the counters SQLite keeps by triggers
/// (`StoreMigrations+Scale.swift`), kept here by triggers too, so no write path (this engine's,
/// or a later role's that changes a request's state) can forget one.
///
/// Triggers rather than the writes themselves: the counters then follow every statement whoever
/// sends it, in the statement's own transaction, and a commit reads them (`run_items`, `run_spend`)
/// instead of recounting a run. `run_items` is kept by statement-level triggers over transition
/// tables: inserting 100,000 requests in a few `UNNEST` statements updates a run's row a few times,
/// not 100,000 times (PostgreSQL keeps every version of a row updated within one transaction).
/// A deleted request's answer goes with it (`ON DELETE CASCADE`) only after the statement, so its
/// `cached` share is taken off by a row trigger BEFORE the delete, while the answer is there to
/// see, as SQLite does. `run_spend` is kept row by row, in the order of `id`, so the dollars add to
/// the very double SQLite's counter holds (a ledger row is written per call: there are few per
/// transaction). The text is frozen with the version, as a migration's is.
extension PostgresSchema {
    static let version2: [String] = itemCounters + spendCounters + retryingIndex

    /// A request that is an item, not a step of a long one (`RequestSource.steps` as of v6).
    static func item(_ row: String) -> String { "\(row).source NOT IN ('chunk', 'reduce')" }

    /// Whether the request `row`'s answer came from the cache, as version 2 asks it (version 5
    /// asks it by key: `answeredFromCache`).
    private static func cached(_ row: String) -> String {
        "EXISTS (SELECT 1 FROM results r WHERE r.request_id = \(row).id AND r.from_cache)"
    }

    /// The counts of a set of request rows, by run; `cached` asks whether a row's answer came from
    /// the cache.
    private static func counts(_ rows: String, cached: (String) -> String) -> String {
        """
        SELECT q.run_id, count(*) AS requests, count(*) FILTER (WHERE \(item("q"))) AS total,
            count(*) FILTER (WHERE \(item("q")) AND q.state = 'done') AS done,
            count(*) FILTER (WHERE \(item("q")) AND q.state = 'failed') AS failed,
            count(*) FILTER (WHERE \(item("q")) AND \(cached("q"))) AS cached
        FROM \(rows) q GROUP BY q.run_id
        """
    }

    static func add(_ rows: String, cached: (String) -> String = cached) -> String {
        """
        INSERT INTO run_items AS c (run_id, requests, total, done, failed, cached) \(counts(rows, cached: cached))
        ON CONFLICT (run_id) DO UPDATE SET requests = c.requests + excluded.requests,
            total = c.total + excluded.total, done = c.done + excluded.done,
            failed = c.failed + excluded.failed, cached = c.cached + excluded.cached;
        """
    }

    static func subtract(_ rows: String, cached: Bool, lookup: (String) -> String = cached) -> String {
        """
        UPDATE run_items c SET requests = c.requests - d.requests, total = c.total - d.total,
            done = c.done - d.done, failed = c.failed - d.failed\(cached ? ", cached = c.cached - d.cached" : "")
        FROM (\(counts(rows, cached: lookup))) d WHERE c.run_id = d.run_id;
        """
    }

    /// Answers from the cache among a set of result rows, by the run of their request when it is an item.
    private static func cachedAnswers(_ rows: String) -> String {
        """
        SELECT q.run_id, count(*) AS n FROM \(rows) a JOIN requests q ON q.id = a.request_id
        WHERE a.from_cache AND \(item("q")) GROUP BY q.run_id
        """
    }

    private static func function(_ name: String, _ body: String) -> String {
        """
        CREATE FUNCTION \(name)() RETURNS trigger LANGUAGE plpgsql AS $body$
        BEGIN
        \(body)
        RETURN NULL;
        END
        $body$
        """
    }

    static let itemCounters = [
        "DELETE FROM run_items",
        add("requests"),
        function("offpeak_run_items_insert", add("new_rows")),
        """
        CREATE TRIGGER run_items_insert AFTER INSERT ON requests REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION offpeak_run_items_insert()
        """,
        function("offpeak_run_items_update", subtract("old_rows", cached: true) + "\n" + add("new_rows")),
        """
        CREATE TRIGGER run_items_update AFTER UPDATE ON requests
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION offpeak_run_items_update()
        """,
        function("offpeak_run_items_delete", subtract("old_rows", cached: false)),
        """
        CREATE TRIGGER run_items_delete AFTER DELETE ON requests REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION offpeak_run_items_delete()
        """,
        """
        CREATE FUNCTION offpeak_run_items_delete_cached() RETURNS trigger LANGUAGE plpgsql AS $body$
        BEGIN
        IF \(item("OLD")) AND \(cached("OLD")) THEN
            UPDATE run_items SET cached = cached - 1 WHERE run_id = OLD.run_id;
        END IF;
        RETURN OLD;
        END
        $body$
        """,
        """
        CREATE TRIGGER run_items_delete_cached BEFORE DELETE ON requests
        FOR EACH ROW EXECUTE FUNCTION offpeak_run_items_delete_cached()
        """,
        function(
            "offpeak_run_items_result_insert",
            "UPDATE run_items c SET cached = c.cached + d.n FROM (\(cachedAnswers("new_rows"))) d "
                + "WHERE c.run_id = d.run_id;"),
        """
        CREATE TRIGGER run_items_result_insert AFTER INSERT ON results REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION offpeak_run_items_result_insert()
        """,
        function(
            "offpeak_run_items_result_delete",
            "UPDATE run_items c SET cached = c.cached - d.n FROM (\(cachedAnswers("old_rows"))) d "
                + "WHERE c.run_id = d.run_id;"),
        """
        CREATE TRIGGER run_items_result_delete AFTER DELETE ON results REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION offpeak_run_items_result_delete()
        """,
        function(
            "offpeak_run_items_result_update",
            "UPDATE run_items c SET cached = c.cached - d.n FROM (\(cachedAnswers("old_rows"))) d "
                + "WHERE c.run_id = d.run_id;\n"
                + "UPDATE run_items c SET cached = c.cached + d.n FROM (\(cachedAnswers("new_rows"))) d "
                + "WHERE c.run_id = d.run_id;"),
        """
        CREATE TRIGGER run_items_result_update AFTER UPDATE ON results
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION offpeak_run_items_result_update()
        """,
        function("offpeak_run_items_run_delete", "DELETE FROM run_items WHERE run_id = OLD.id;"),
        """
        CREATE TRIGGER run_items_run_delete AFTER DELETE ON runs
        FOR EACH ROW EXECUTE FUNCTION offpeak_run_items_run_delete()
        """,
    ]

    /// Each sum of `run_spend`, and what one ledger row (`NEW` or `OLD`) adds to it.
    private static let sums: [(column: String, value: @Sendable (String) -> String)] = [
        ("calls", { "CASE WHEN NOT \($0).cache_hit THEN 1 ELSE 0 END" }),
        ("input_tokens", { "\($0).input_tokens" }), ("output_tokens", { "\($0).output_tokens" }),
        ("cache_read_tokens", { "\($0).cache_read_tokens" }),
        ("cache_write_tokens", { "\($0).cache_write_tokens" }),
        ("dollars", { "\($0).dollars" }), ("naive_dollars", { "\($0).naive_dollars" }),
        ("failed_calls", { "CASE WHEN \($0).failed THEN 1 ELSE 0 END" }),
        ("unpriced_calls", { "CASE WHEN \($0).unpriced AND NOT \($0).cache_hit THEN 1 ELSE 0 END" }),
    ]

    /// `run_spend`'s columns besides `run_id`.
    static var runSpendColumns: [String] { sums.map(\.column) }

    private static let spendInsert =
        "INSERT INTO run_spend AS s (run_id, \(sums.map(\.column).joined(separator: ", ")))"
    private static let spendMerge =
        "ON CONFLICT (run_id) DO UPDATE SET "
        + sums.map { "\($0.column) = s.\($0.column) + excluded.\($0.column)" }.joined(separator: ", ")

    private static func spendValues(_ row: String) -> String {
        (["\(row).run_id"] + sums.map { $0.value(row) }).joined(separator: ", ")
    }

    private static let spendSubtract =
        "UPDATE run_spend SET "
        + sums.map { "\($0.column) = \($0.column) - (\($0.value("OLD")))" }.joined(separator: ", ")
        + " WHERE run_id = OLD.run_id;"

    static let spendCounters = [
        "DELETE FROM run_spend",
        // Summed in the order of `id`, as SQLite's counter added them.
        "\(spendInsert) SELECT run_id, "
            + sums.map { "sum(\($0.value("ledger")) ORDER BY id)" }.joined(separator: ", ")
            + " FROM ledger WHERE run_id IS NOT NULL GROUP BY run_id",
        function(
            "offpeak_run_spend_insert", "\(spendInsert) VALUES (\(spendValues("NEW"))) \(spendMerge);"),
        """
        CREATE TRIGGER run_spend_insert AFTER INSERT ON ledger FOR EACH ROW WHEN (NEW.run_id IS NOT NULL)
        EXECUTE FUNCTION offpeak_run_spend_insert()
        """,
        function("offpeak_run_spend_delete", spendSubtract),
        """
        CREATE TRIGGER run_spend_delete AFTER DELETE ON ledger FOR EACH ROW WHEN (OLD.run_id IS NOT NULL)
        EXECUTE FUNCTION offpeak_run_spend_delete()
        """,
        function(
            "offpeak_run_spend_update",
            "IF OLD.run_id IS NOT NULL THEN \(spendSubtract) END IF;\n"
                + "IF NEW.run_id IS NOT NULL THEN \(spendInsert) VALUES (\(spendValues("NEW"))) \(spendMerge); "
                + "END IF;"),
        """
        CREATE TRIGGER run_spend_update AFTER UPDATE OF run_id, cache_hit, failed, unpriced, input_tokens,
            output_tokens, cache_read_tokens, cache_write_tokens, dollars, naive_dollars ON ledger
        FOR EACH ROW EXECUTE FUNCTION offpeak_run_spend_update()
        """,
    ]

    /// Retries with no time first, as SQLite orders NULL: the index gives that order as it stands.
    static let retryingIndex = [
        "DROP INDEX requests_retrying",
        "CREATE INDEX requests_retrying ON requests (next_attempt_at NULLS FIRST) WHERE state = 'retrying'",
    ]
}
