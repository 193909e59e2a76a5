/// Version 3 of the PostgreSQL store: what the ledger's and the answer cache's roles need beyond
/// version 1's tables.
///
/// `cache_totals` is kept by triggers, as SQLite keeps it (`StoreMigrations.createCacheTotals`), so a
/// save reads one row to know whether to evict. Inserts and deletes are counted per statement, over
/// transition tables: an eviction or a purge of thousands of entries updates the row once. A change
/// of an entry's sizes (a replaced entry) is counted per row, and only when a size changes: a hit
/// (`hits`, `last_access_at`) never touches the row.
///
/// Entries are evicted least recently used first and, among those used at the same time, by key
/// byte by byte (as SQLite's engine evicts them): `cache_entries_by_use` is the index eviction walks,
/// in that order, replacing `cache_entries_by_access`. No column is added: both engines keep the same
/// columns, so a store copies row for row (`StoreCopy`). The text is frozen with the version, as a
/// migration's is.
extension PostgresSchema {
    static let version3: [String] = cacheOrder + cacheTotals

    static let cacheOrder = [
        "DROP INDEX cache_entries_by_access",
        """
        CREATE INDEX cache_entries_by_use ON cache_entries (last_access_at, key COLLATE "C") INCLUDE (stored_bytes)
        """,
    ]

    /// The function adding (`+`) or taking off (`-`) a transition table's entries and bytes.
    private static func totals(_ name: String, _ rows: String, _ sign: String) -> String {
        """
        CREATE FUNCTION \(name)() RETURNS trigger LANGUAGE plpgsql AS $body$
        BEGIN
        UPDATE cache_totals c SET entries = c.entries \(sign) d.entries, raw_bytes = c.raw_bytes \(sign) d.raw_bytes,
            stored_bytes = c.stored_bytes \(sign) d.stored_bytes
        FROM (SELECT count(*) AS entries, coalesce(sum(raw_bytes), 0) AS raw_bytes,
            coalesce(sum(stored_bytes), 0) AS stored_bytes FROM \(rows)) d
        WHERE c.id = 1 AND d.entries > 0;
        RETURN NULL;
        END
        $body$
        """
    }

    static let cacheTotals = [
        """
        INSERT INTO cache_totals (id, entries, raw_bytes, stored_bytes)
        SELECT 1, count(*), coalesce(sum(raw_bytes), 0), coalesce(sum(stored_bytes), 0) FROM cache_entries
        ON CONFLICT (id) DO UPDATE SET entries = excluded.entries, raw_bytes = excluded.raw_bytes,
            stored_bytes = excluded.stored_bytes
        """,
        totals("offpeak_cache_totals_insert", "new_rows", "+"),
        """
        CREATE TRIGGER cache_totals_insert AFTER INSERT ON cache_entries REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION offpeak_cache_totals_insert()
        """,
        totals("offpeak_cache_totals_delete", "old_rows", "-"),
        """
        CREATE TRIGGER cache_totals_delete AFTER DELETE ON cache_entries REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION offpeak_cache_totals_delete()
        """,
        """
        CREATE FUNCTION offpeak_cache_totals_update() RETURNS trigger LANGUAGE plpgsql AS $body$
        BEGIN
        UPDATE cache_totals SET raw_bytes = raw_bytes - OLD.raw_bytes + NEW.raw_bytes,
            stored_bytes = stored_bytes - OLD.stored_bytes + NEW.stored_bytes WHERE id = 1;
        RETURN NULL;
        END
        $body$
        """,
        """
        CREATE TRIGGER cache_totals_update AFTER UPDATE OF raw_bytes, stored_bytes ON cache_entries
        FOR EACH ROW WHEN (OLD.raw_bytes <> NEW.raw_bytes OR OLD.stored_bytes <> NEW.stored_bytes)
        EXECUTE FUNCTION offpeak_cache_totals_update()
        """,
    ]
}
