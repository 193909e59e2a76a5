import Foundation
import OffpeakTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `offpeak store info` end to end: the built binary on a SQLite workspace and on a PostgreSQL store,
/// its text compared whole, the parts that vary (sizes, pids, times) read independently.
@Suite(.ownThreads) struct StoreInfoTests {
    /// The JSON keys, the same on both engines.
    static let keys = [
        "connections", "engine", "known_schema_version", "location", "schema_version", "server_version",
        "size_bytes",
    ]

    /// Sizes as offpeak's reports write them: decimal units, one decimal below 10.
    static func bytes(_ count: Int) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(count)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0
            ? "\(count) B" : String(format: value < 10 ? "%.1f" : "%.0f", value) + " " + units[unit]
    }

    /// Left-aligned columns two spaces apart, the last one unpadded.
    static func table(_ rows: [[String]]) -> String {
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1
                    ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func onSQLite() throws {
        let workspace = try TemporaryWorkspace()
        let result = try workspace.offpeak(["store", "info"], environment: ["OFFPEAK_STORE": nil])
        #expect(result.status == 0, "\(result.stderr)")
        // Closed, the store has folded its -wal back: the file is exactly its pages.
        let path = workspace.root.appendingPathComponent("cache/offpeak.sqlite").path
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        #expect(size > 0)
        #expect(
            result.stdout == """
                store:          SQLite \(path)
                schema version: 32
                size:           \(size) bytes (\(Self.bytes(size)))

                """)
        let json = try workspace.offpeak(["store", "info", "--json"], environment: ["OFFPEAK_STORE": nil])
        #expect(json.status == 0)
        let object = try Self.json(json.stdout)
        #expect(object.keys.sorted() == Self.keys)
        #expect(object["engine"] as? String == "sqlite")
        #expect(object["schema_version"] as? Int == 32)
        #expect(object["known_schema_version"] as? Int == 32)
        #expect(object["size_bytes"] as? Int == size)
        #expect(object["connections"] is NSNull)
        #expect(object["server_version"] is NSNull)
    }

    @Test func onPostgreSQL() throws {
        let cluster = PostgresCluster.shared
        let url = try cluster.makeDatabase()
        let database = String(url.split(separator: "/").last?.split(separator: "?").first ?? "")
        // Another offpeak host's connection, busy for the length of the test.
        let peer = Process()
        peer.executableURL = cluster.psqlBinary
        peer.arguments = [
            "-h", cluster.host, "-p", String(cluster.port), "-U", cluster.user, "-d", database, "-Xqc",
            "SELECT pg_sleep(120)",
        ]
        peer.environment = ["PGPASSWORD": cluster.password, "PGAPPNAME": "offpeak-peer"]
        peer.standardOutput = FileHandle.nullDevice
        peer.standardError = FileHandle.nullDevice
        try peer.run()
        defer {
            kill(peer.processIdentifier, SIGKILL)
            peer.waitUntilExit()
        }
        let busy =
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'offpeak-peer' AND state = 'active'"
        let deadline = Date() + 30
        while try cluster.psql(busy, database: database) != "1", Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }

        let workspace = try TemporaryWorkspace()
        let environment: [String: String?] = [
            "OFFPEAK_STORE": url, "PGPASSWORD": cluster.password, "PGPASSFILE": "/nonexistent", "TZ": "UTC",
        ]
        // The database's size moves on its own, both ways: the server adds a table's free-space and
        // visibility maps when it gets round to it, and autovacuum and checkpoints give pages back
        // (a loaded run saw 9,207,143 bytes, then 9,118,211, then 9,280,871). So offpeak's must lie
        // within 2 % of the server's before and after: a fresh database's catalogs alone are most of it,
        // so a size made up any other way (offpeak's tables only) is far outside.
        let sizeQuery = "SELECT pg_database_size('\(database)')"
        let sizeBefore = try #require(Int(try cluster.psql(sizeQuery, database: database)))
        let result = try workspace.offpeak(["store", "info"], environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        let json = try workspace.offpeak(["store", "info", "--json"], environment: environment)
        #expect(json.status == 0, "\(json.stderr)")
        let sizeAfter = try #require(Int(try cluster.psql(sizeQuery, database: database)))

        // What the server says, read apart from offpeak.
        let printedSize = result.stdout.split(separator: "\n").first { $0.hasPrefix("size:") }
            .flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { Int($0) }
        let size = try #require(printedSize, "\(result.stdout)")
        let server = [sizeBefore, sizeAfter]
        let near = Int(Double(server.min() ?? 0) * 0.98)...Int(Double(server.max() ?? 0) * 1.02)
        #expect(near.contains(size), "\(sizeBefore), \(size), \(sizeAfter)")
        let version = try cluster.psql("SHOW server_version", database: database)
        let schema = try #require(
            Int(try cluster.psql("SELECT max(version) FROM offpeak_schema", database: database)))
        let others = try cluster.psql(
            """
            SELECT pid, coalesce(host(client_addr), 'local'), application_name,
                to_char(backend_start AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), coalesce(state, '-')
            FROM pg_stat_activity WHERE application_name LIKE 'offpeak%' AND datname = '\(database)'
            """, database: database)
        let rows = others.split(separator: "\n").map {
            $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        }
        #expect(
            rows.count == 1 && rows.first?[2] == "offpeak-peer" && rows.first?[4] == "active", "\(others)")
        let table = Self.table([["PID", "CLIENT", "APPLICATION", "STARTED", "STATE"]] + rows)
        #expect(
            result.stdout == """
                store:          PostgreSQL \(url)
                schema version: \(schema)
                size:           \(size) bytes (\(Self.bytes(size)))
                server version: \(version)
                connections:    1 other offpeak connection
                \(table)
                """)
        #expect(!result.stdout.contains(cluster.password) && !json.stdout.contains(cluster.password))

        let object = try Self.json(json.stdout)
        #expect(object.keys.sorted() == Self.keys)
        #expect(object["engine"] as? String == "postgresql")
        #expect(object["location"] as? String == url)
        #expect(object["schema_version"] as? Int == schema)
        #expect(object["known_schema_version"] as? Int == schema)
        let jsonSize = try #require(object["size_bytes"] as? Int)
        #expect(near.contains(jsonSize), "\(sizeBefore), \(jsonSize), \(sizeAfter)")
        #expect(object["server_version"] as? String == version)
        let connections = try #require(object["connections"] as? [[String: Any]])
        #expect(connections.count == 1)
        #expect(
            connections.first?.keys.sorted() == [
                "application_name", "backend_start", "client_address", "pid", "state",
            ])
        #expect((connections.first?["pid"] as? Int).map(String.init) == rows.first?[0])
        #expect(connections.first?["client_address"] as? String == "127.0.0.1")
        #expect(connections.first?["backend_start"] as? String == rows.first?[3])
    }

    /// offpeak.yaml's `store:` is used; OFFPEAK_STORE wins over it; a bad one is refused naming where.
    @Test func whereTheStoreIsAndItsMistakes() throws {
        let cluster = PostgresCluster.shared
        let url = try cluster.makeDatabase()
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nstore: \(url)\n")
        let secrets: [String: String?] = ["PGPASSWORD": cluster.password, "PGPASSFILE": "/nonexistent"]
        let configured = try workspace.offpeak(
            ["store", "info", "--json"], environment: secrets.merging(["OFFPEAK_STORE": nil]) { $1 })
        #expect(configured.status == 0, "\(configured.stderr)")
        #expect(try Self.json(configured.stdout)["engine"] as? String == "postgresql")
        // Every command uses the store offpeak.yaml names, not the SQLite file.
        let status = try workspace.offpeak(
            ["status"], environment: secrets.merging(["OFFPEAK_STORE": nil]) { $1 })
        #expect(status.status == 0, "\(status.stderr)")
        #expect(
            !FileManager.default.fileExists(
                atPath: workspace.root.appendingPathComponent("cache/offpeak.sqlite").path))
        let overridden = try workspace.offpeak(
            ["store", "info", "--json"], environment: secrets.merging(["OFFPEAK_STORE": "sqlite"]) { $1 })
        #expect(try Self.json(overridden.stdout)["engine"] as? String == "sqlite")

        let bad = try workspace.offpeak(
            ["store", "info"],
            environment: ["OFFPEAK_STORE": "postgresql://u:hunter2hunter2@h/d?sslmode=maybe"])
        #expect(bad.status == 78)
        #expect(
            bad.stderr
                == "offpeak: OFFPEAK_STORE: sslmode 'maybe' is not one of disable, prefer, require, verify-ca, verify-full\n"
        )
        try workspace.write("offpeak.yaml", "provider: sim\nstore: postgresql://u@h/d?sslmode=maybe\n")
        let inFile = try workspace.offpeak(["store", "info"], environment: ["OFFPEAK_STORE": nil])
        #expect(inFile.status == 78)
        #expect(
            inFile.stderr
                == "offpeak: offpeak.yaml:2:8: store: sslmode 'maybe' is not one of disable, prefer, require, verify-ca, verify-full\n"
        )

        try workspace.write("offpeak.yaml", "provider: sim\n")
        let wrong = try workspace.offpeak(
            ["store", "info"],
            environment: [
                "OFFPEAK_STORE": url, "PGPASSWORD": "wrong-pw-123456", "PGPASSFILE": "/nonexistent",
            ])
        #expect(wrong.status == 78)
        #expect(
            wrong.stderr
                == "offpeak: PostgreSQL at 127.0.0.1:\(cluster.port) refused the password of user 'offpeak_test' "
                + "(from the URL, PGPASSWORD or PGPASSFILE/~/.pgpass)\n")
    }
}
