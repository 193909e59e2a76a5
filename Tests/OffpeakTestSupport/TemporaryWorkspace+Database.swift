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
