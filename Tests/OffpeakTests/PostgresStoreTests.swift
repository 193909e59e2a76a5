import Foundation
import GRDB
import Logging
import OffpeakTestSupport
import PostgresNIO
import Synchronization
import Testing

@testable import Offpeak

/// The PostgreSQL store's connection and migrations, on a real throwaway cluster.
@Suite(.ownThreads) struct PostgresStoreTests {
    static let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The cluster's password, and no password file of this machine's user.
    static func environment(_ cluster: PostgresCluster) -> [String: String] {
        cluster.environment.merging(["PGPASSFILE": "/nonexistent/pgpass"]) { $1 }
    }

    /// A new database of the shared cluster, connected.
    static func connect(
        _ text: String? = nil, cluster: PostgresCluster = .shared
    ) throws -> PostgresStore {
        let url = try PostgresURL.parse(text ?? cluster.makeDatabase(), defaultUser: "nobody")
        return try PostgresStore.connect(url, environment: environment(cluster), logger: logger)
    }

    /// The first column of every row `sql` answers.
    static func values<Value: PostgresDecodable>(
        _ store: PostgresStore, _ sql: PostgresQuery, as type: Value.Type
    ) throws -> [Value] {
        try store.query(sql).map { row throws(OffpeakError) -> Value in try store.decode(row, as: Value.self)
        }
    }

    @Test func migratesOnceAndAgainToTheSameVersion() throws {
        let store = try Self.connect()
        defer { store.close() }
        #expect(try PostgresMigrations.version(of: store) == nil)
        let latest = PostgresMigrations.latest
        #expect(try PostgresMigrations.migrate(store) == latest)
        #expect(try PostgresMigrations.migrate(store) == latest)
        #expect(
            try Self.values(store, "SELECT version FROM offpeak_schema ORDER BY version", as: Int.self)
                == PostgresMigrations.all.map(\.version))
        #expect(try PostgresMigrations.version(of: store) == latest)
    }

    @Test func twoConnectionsMigratingAtOnceApplyEachVersionOnce() throws {
        let url = try PostgresCluster.shared.makeDatabase()
        let stores = try (0..<2).map { _ in try Self.connect(url) }
        defer { for store in stores { store.close() } }
        let results = Synchronization.Mutex<[Result<Int, OffpeakError>]>([])
        let group = DispatchGroup()
        let start = DispatchSemaphore(value: 0)
        for store in stores {
            group.enter()
            Thread.detachNewThread {
                start.wait()
                let result = Result { () throws(OffpeakError) in try PostgresMigrations.migrate(store) }
                results.withLock { $0.append(result) }
                group.leave()
            }
        }
        start.signal()
        start.signal()
        group.wait()
        let versions = try results.withLock { $0 }.map { try $0.get() }
        #expect(versions == [PostgresMigrations.latest, PostgresMigrations.latest])
        #expect(
            try Self.values(stores[0], "SELECT count(*) FROM offpeak_schema", as: Int.self)
                == [PostgresMigrations.all.count])
    }

    @Test func refusesAStoreNewerThanItKnows() throws {
        let store = try Self.connect()
        defer { store.close() }
        try PostgresMigrations.migrate(store)
        try store.query("INSERT INTO offpeak_schema (version) VALUES (\(PostgresMigrations.latest + 1))")
        do {
            try PostgresMigrations.migrate(store)
            Issue.record("expected the newer store to be refused")
        } catch {
            #expect(error.status == .configuration)
            #expect(
                error.description
                    == "the PostgreSQL store at \(store.url.endpoint) database '\(store.url.database)' has schema "
                    + "version \(PostgresMigrations.latest + 1), newer than this offpeak knows "
                    + "(\(PostgresMigrations.latest)); upgrade offpeak"
            )
        }
        // The lock was given back: another connection migrates (and is refused) without waiting.
        let other = try Self.connect(PostgresCluster.shared.url(database: store.url.database))
        defer { other.close() }
        #expect(throws: OffpeakError.self) { try PostgresMigrations.migrate(other) }
    }

    @Test func aFailedVersionLeavesNothingOfItself() throws {
        let store = try Self.connect()
        defer { store.close() }
        let broken = PostgresMigrations.Migration(
            version: PostgresMigrations.latest + 1, name: "broken",
            statements: ["CREATE TABLE half (id bigint)", "SELECT no_such_function()"])
        #expect(throws: OffpeakError.self) {
            try PostgresMigrations.migrate(store, migrations: PostgresMigrations.all + [broken])
        }
        #expect(try PostgresMigrations.version(of: store) == PostgresMigrations.latest)
        #expect(try Self.values(store, "SELECT to_regclass('half') IS NULL", as: Bool.self) == [true])
    }

    /// Version 1, with version 6's hosts, version 7's job specs, version 8's shared limits and
    /// version 10's claims, version 11's hosts of deferrals and batches, version 12's reuse, version 13's
    /// searches and version 14's audit, has every table, column, index and primary key the SQLite
    /// store has at its latest migration.
    @Test func version1HasTheSQLiteStoresTablesColumnsAndIndexes() throws {
        let store = try Self.connect()
        defer { store.close() }
        // Version 1, the hosts' version 6, the job specs' version 7, the limits' version 8, version 9
        // (a function), the claims' version 10 and the hosts' version 11 alone: versions 2 to 5
        // change indexes for PostgreSQL's plans.
        let later = PostgresMigrations.all.filter { $0.version >= 6 }
        try PostgresMigrations.migrate(store, migrations: Array(PostgresMigrations.all.prefix(1)) + later)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offpeak-schema-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let sqlite = try Store(url: folder.appendingPathComponent("offpeak.sqlite"))
        let expected = try sqlite.sqlite.read { db in
            var columns: [String: [String]] = [:]
            let tables = try String.fetchAll(
                db,
                sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                    + "AND name != 'grdb_migrations'")
            for table in tables {
                columns[table] = try db.columns(in: table).map(\.name).sorted()
                let key = try db.primaryKey(table).columns
                columns[table + " key"] = key
            }
            // SQLite's cache table finds rows by an id made from the key (`CacheRowID`), its own
            // layout; the key is unique there, as it is PostgreSQL's primary key.
            columns["cache_entries"]?.removeAll { $0 == "id" }
            columns["cache_entries key"] = ["key"]
            let indexes = try String.fetchAll(
                db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'")
            columns["indexes"] = indexes.sorted()
            return columns
        }
        var actual: [String: [String]] = [:]
        let rows = try store.query(
            """
            SELECT table_name::text, column_name::text FROM information_schema.columns
            WHERE table_schema = 'public' AND table_name <> 'offpeak_schema'
            """)
        for row in rows {
            let (table, column) = try store.decode(row, as: (String, String).self)
            actual[table, default: []].append(column)
        }
        for table in actual.keys { actual[table]?.sort() }
        let keys = try store.query(
            """
            SELECT c.relname::text, a.attname::text FROM pg_index i
            JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, position) ON true
            JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
            WHERE i.indisprimary AND n.nspname = 'public' AND c.relname <> 'offpeak_schema'
            ORDER BY c.relname, k.position
            """)
        for row in keys {
            let (table, column) = try store.decode(row, as: (String, String).self)
            actual[table + " key", default: []].append(column)
        }
        let indexes = try store.query(
            """
            SELECT indexname::text FROM pg_indexes WHERE schemaname = 'public'
            AND indexname NOT LIKE '%_pkey' AND indexname NOT LIKE '%_key'
            """)
        actual["indexes"] = try indexes.map { row throws(OffpeakError) -> String in
            try store.decode(row, as: String.self)
        }.sorted()
        // PostgreSQL's own: the rows of its ticks' and copies' locks (`PostgresStore+Locks`); SQLite's
        // tick lock is the workspace's file.
        actual["store_locks"] = nil
        actual["store_locks key"] = nil
        #expect(expected.count == 2 * 31 + 1, "31 tables with their keys, and the indexes")
        #expect(actual == expected)
    }

    /// A payload is `bytea`: the LZ4 bytes go in and come back as they were, zero bytes and all.
    @Test func payloadsKeepEveryByte() throws {
        let store = try Self.connect()
        defer { store.close() }
        try PostgresMigrations.migrate(store)
        let bytes: [UInt8] = [0x04, 0x22, 0x4D, 0x18, 0, 0, 0xFF, 0x01, 0x80]
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        try store.query(
            """
            INSERT INTO cache_entries (key, kind, created_at, expires_at, last_access_at, raw_bytes, stored_bytes, payload)
            VALUES ('k', 'answer', \(now), \(now), \(now), 9, 9, \(ByteBuffer(bytes: bytes)))
            """)
        let row = try #require(try store.query("SELECT payload, created_at FROM cache_entries").first)
        let (payload, created) = try store.decode(row, as: (ByteBuffer, Date).self)
        #expect(Array(buffer: payload) == bytes)
        #expect(created == now)
    }
}
