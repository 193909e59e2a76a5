/// The run counters' trigger functions of version 2 again, with each answer looked up by its key.
///
/// Version 2 asked whether a request's answer came from the cache with `EXISTS (SELECT 1 FROM
/// results …)` and joined a transition table to `requests`. PL/pgSQL plans a function's statements
/// once per session and keeps the plan; planned while `results` was small, `EXISTS` became a hashed
/// subplan that reads all of `results` at every commit (a run's commits slowed as it answered: 0.7 ms
/// of a commit at 5,000 answers, more at 100,000). Written as scalar subqueries on the two tables'
/// primary keys, the lookups stay one index probe per row whatever the tables' statistics said when
/// the plan was made. The counts are the same. The text is frozen with the version, as a migration's is.
extension PostgresSchema {
    static let version5: [String] = [
        replace("offpeak_run_items_insert", add("new_rows", cached: answeredFromCache)),
        replace(
            "offpeak_run_items_update",
            subtract("old_rows", cached: true, lookup: answeredFromCache) + "\n"
                + add("new_rows", cached: answeredFromCache)),
        replace("offpeak_run_items_result_insert", cachedChange("new_rows", "+")),
        replace("offpeak_run_items_result_delete", cachedChange("old_rows", "-")),
        replace(
            "offpeak_run_items_result_update",
            cachedChange("old_rows", "-") + "\n" + cachedChange("new_rows", "+")),
    ]

    /// Whether the request `row`'s answer came from the cache: one probe of `results`' key.
    private static func answeredFromCache(_ row: String) -> String {
        "coalesce((SELECT r.from_cache FROM results r WHERE r.request_id = \(row).id), false)"
    }

    /// Adds (`+`) or takes off (`-`) the answers from the cache among a set of result rows, each
    /// counted on its request's run when the request is an item: one probe of `requests`' key each.
    private static func cachedChange(_ rows: String, _ sign: String) -> String {
        """
        UPDATE run_items c SET cached = c.cached \(sign) d.n
        FROM (SELECT (SELECT q.run_id FROM requests q WHERE q.id = a.request_id AND \(item("q"))) AS run_id,
            count(*) AS n
            FROM \(rows) a WHERE a.from_cache GROUP BY 1) d
        WHERE c.run_id = d.run_id;
        """
    }

    /// A trigger function made, or remade in place, with `body`.
    static func replace(_ name: String, _ body: String) -> String {
        """
        CREATE OR REPLACE FUNCTION \(name)() RETURNS trigger LANGUAGE plpgsql AS $body$
        BEGIN
        \(body)
        RETURN NULL;
        END
        $body$
        """
    }
}
