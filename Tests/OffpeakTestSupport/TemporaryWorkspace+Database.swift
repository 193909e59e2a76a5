import Foundation

/// The workspace's database on the test cluster, looked at from outside offpeak (the PostgreSQL
/// pass, `TestStore`), as the SQLite pass looks at the workspace's file.
extension TemporaryWorkspace {
    struct NoDatabase: Error, CustomStringConvertible {
        var description: String { "the workspace has no database: the suite is not on PostgreSQL" }
    }

    /// Runs `sql` on the workspace's database through `psql`; its unaligned, tuples-only output.
    @discardableResult
    public func psql(_ sql: String) throws -> String {
        guard let url = try storeEnvironment()["OFFPEAK_STORE"],
            let name = url.split(separator: "/").last?.split(separator: "?").first
        else { throw NoDatabase() }
        return try PostgresCluster.shared.psql(sql, database: String(name))
    }

    /// Each table of the workspace's database with its row count and a digest of its rows: the
    /// same while nothing is written, created or removed.
    public func databaseRows() throws -> [String: String] {
        let query = try psql(
            """
            SELECT string_agg(format(
                'SELECT %L || '' '' || count(*) || '' '' || md5(coalesce(string_agg(t::text, '','' ORDER BY t::text), '''')) FROM %I t',
                tablename, tablename), ' UNION ALL ' ORDER BY tablename)
            FROM pg_tables WHERE schemaname = current_schema()
            """)
        var rows: [String: String] = [:]
        for line in try psql(query).split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            rows[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return rows
    }
}

extension TemporaryWorkspace {
    /// The first column of `sql`'s rows, one a line, from the workspace's store: its database on
    /// the test cluster (`psql`), else its SQLite file, read-only (Python's `sqlite3`).
    public func storeValues(_ sql: String) throws -> String {
        if (try? storeEnvironment()["OFFPEAK_STORE"]) != nil { return try psql(sql) }
        let file = root.appendingPathComponent("cache/offpeak.sqlite").path
        let script = """
            import sqlite3, sys
            db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True, timeout=10)
            for row in db.execute(sys.argv[2]): print(row[0])
            """
        let result = try CommandResult.run(
            URL(fileURLWithPath: "/usr/bin/python3"), ["-c", script, file, sql], environment: [:], stdin: nil,
            timeout: 30)
        guard result.status == 0 else { throw StoreQueryFailed(sql: sql, stderr: result.stderr) }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    struct StoreQueryFailed: Error, CustomStringConvertible {
        var sql: String
        var stderr: String
        var description: String { "\(sql): \(stderr)" }
    }
}
