import GRDB

extension StoreMigrations {
    /// v25: the cache table found by an integer row id made from the key (`CacheRowID`), the key
    /// kept unique beside it, so a lookup descends one B-tree instead of two. The table is made anew
    /// (SQLite cannot change a primary key), its indexes and the running totals' triggers with it,
    /// and the totals are counted again from what it holds. Of two old keys with one id (a chance
    /// of about one in 10^7 in a million entries) one is kept, the one used last as the ids are
    /// read, as eviction would. The rows go in in id order, so the new table is written front to
    /// back with full pages; only the ids are sorted, not the payloads.
    /// The PostgreSQL store keeps its layout: a B-tree on the text key is one descent there.
    static func findCacheRowsByID(_ db: Database) throws {
        let rowID = DatabaseFunction("offpeak_cache_row_id", argumentCount: 1, pure: true) { values in
            String.fromDatabaseValue(values[0]).map(CacheRowID.of)
        }
        db.add(function: rowID)
        defer { db.remove(function: rowID) }
        let columns = """
            key, kind, job, provider, model, url, created_at, expires_at, last_access_at, hits, raw_bytes,
                stored_bytes, payload, etag, last_modified, reuse
            """
        try db.execute(
            sql: """
                CREATE TABLE cache_rows (
                    id INTEGER PRIMARY KEY NOT NULL, key TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, job TEXT,
                    provider TEXT, model TEXT, url TEXT, created_at DATETIME NOT NULL,
                    expires_at DATETIME NOT NULL, last_access_at DATETIME NOT NULL,
                    hits INTEGER NOT NULL DEFAULT 0, raw_bytes INTEGER NOT NULL, stored_bytes INTEGER NOT NULL,
                    payload BLOB NOT NULL, etag TEXT, last_modified TEXT, reuse BOOLEAN NOT NULL DEFAULT 0);
                WITH ids AS MATERIALIZED (
                    SELECT offpeak_cache_row_id(key) AS id, rowid AS old FROM cache_entries
                    ORDER BY 1, last_access_at DESC)
                INSERT OR IGNORE INTO cache_rows (id, \(columns))
                SELECT ids.id, \(columns) FROM ids JOIN cache_entries ON cache_entries.rowid = ids.old;
                DROP TRIGGER cache_totals_insert;
                DROP TRIGGER cache_totals_delete;
                DROP TRIGGER cache_totals_update;
                DROP TABLE cache_entries;
                ALTER TABLE cache_rows RENAME TO cache_entries;
                CREATE INDEX cache_entries_on_expires_at ON cache_entries (expires_at);
                CREATE INDEX cache_entries_by_job ON cache_entries (job);
                CREATE INDEX cache_entries_by_access
                    ON cache_entries (last_access_at, stored_bytes, raw_bytes, expires_at, created_at);
                CREATE INDEX cache_entries_by_created ON cache_entries (created_at);
                UPDATE cache_totals SET (entries, raw_bytes, stored_bytes) = (
                    SELECT COUNT(*), COALESCE(SUM(raw_bytes), 0), COALESCE(SUM(stored_bytes), 0)
                    FROM cache_entries) WHERE id = 1;
                \(cacheTotalsTriggers)
                """)
    }
}
