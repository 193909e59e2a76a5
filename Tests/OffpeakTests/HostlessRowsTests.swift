import Foundation
import GRDB
import OffpeakTestSupport
import PostgresNIO
import Testing

@testable import Offpeak

/// Work deferred and provider batches sent before offpeak recorded which host did it (the SQLite
/// store's v18, the PostgreSQL store's version 11) keep their rows through the upgrade; `queue`
/// and `batches` show their host as `-`, and `--json` leaves the key out. On SQLite this is also
/// the first read after the upgrade in the process that ran it: it must see the added column.
@Suite(.ownThreads) struct HostlessRowsTests {
    typealias F = RoleFixtures

    /// The SQLite store's last migration before hosts were recorded on deferrals and batches.
    static let beforeSQLite = "v16: the providers' limits shared by every process on the store"
    /// The PostgreSQL store's last version before them.
    static let beforePostgres = 9

    /// A store of `engine` at the version before, given a run `r1` of job `j`, its deferral and one
    /// batch of its, then brought up to date as a command opening it would.
    /// - Returns: the store, and what ends it (the PostgreSQL connection; the SQLite workspace).
    static func upgradedStore(_ engine: StoreEngine) throws -> (store: Store, end: () -> Void) {
        switch engine {
        case .sqlite:
            let workspace = try TemporaryWorkspace()
            let url = workspace.root.appendingPathComponent("offpeak.sqlite")
            let queue = try DatabaseQueue(path: url.path)
            try StoreMigrations.migrator.migrate(queue, upTo: beforeSQLite)
            try queue.write { db in
                try F.run("r1", job: "j", state: .waiting).insert(db)
                try db.execute(
                    sql: """
                        INSERT INTO deferred (job, run_id, reasons, deferred_at, checked_at)
                        VALUES ('j', 'r1', 'waiting for external power', ?, ?)
                        """, arguments: [F.t0, F.t0 + 60])
                try db.execute(
                    sql: """
                        INSERT INTO provider_batches (id, run_id, provider, model, state, prepared_at)
                        VALUES ('ob000000000001', 'r1', 'anthropic', 'm', 'preparing', ?)
                        """, arguments: [F.t0])
            }
            try queue.close()
            let store = try Store(url: url)
            return (store, { _ = workspace })
        case .postgresql:
            let connection = try PostgresStoreTests.connect()
            try PostgresMigrations.migrate(
                connection, migrations: PostgresMigrations.all.filter { $0.version <= beforePostgres })
            let before = PostgresEngine(connection)
            try before.insert(run: F.run("r1", job: "j", state: .waiting), requests: [])
            try connection.query(
                """
                INSERT INTO deferred (job, run_id, reasons, deferred_at, checked_at)
                VALUES ('j', 'r1', 'waiting for external power', \(F.t0), \(F.t0 + 60))
                """)
            try connection.query(
                """
                INSERT INTO provider_batches (id, run_id, provider, model, state, prepared_at)
                VALUES ('ob000000000001', 'r1', 'anthropic', 'm', 'preparing', \(F.t0))
                """)
            #expect(try PostgresMigrations.migrate(connection) == PostgresMigrations.latest)
            return (Store(PostgresEngine(connection)), { connection.close() })
        }
    }

    @Test(arguments: StoreEngine.allCases)
    func queueAndBatchesShowNoHostForRowsWrittenBefore(engine: StoreEngine) throws {
        let (store, end) = try Self.upgradedStore(engine)
        defer { end() }
        #expect(try store.schedules.deferred().map(\.host) == [""])
        #expect(try store.batches.batch(id: "ob000000000001")?.host == "")

        let queue = try QueueReport.make(store: store, conditions: nil)
        let since = Timestamp.text(F.t0), checked = Timestamp.text(F.t0 + 60)
        let pad = { (word: String) in String(repeating: " ", count: since.count - word.count) }
        #expect(
            queue.text == """
                JOB  RUN  WAITING  SINCE\(pad("SINCE"))  CHECKED\(pad("CHECKED"))  HOST  WHY
                j    r1   0        \(since)  \(checked)  -     waiting for external power

                """)
        let object = try #require(try Self.json(queue) as? [String: Any])
        let entry = try #require(object["deferred"] as? [[String: Any]]).first
        #expect(entry?["job"] as? String == "j" && entry?.keys.contains("host") == false)

        let batches = try BatchReport.make(store: store, all: false)
        let prepared = BatchLine.time(F.t0)
        #expect(
            batches.text == """
                BATCH           JOB  RUN  HOST  PROVIDER   PROVIDER ID      STATE      PROVIDER STATE  ITEMS  REQUESTS  PROGRESS   WORST  PREPARED\(String(repeating: " ", count: prepared.count - 8))  SUBMITTED  EXPIRES
                ob000000000001  j    r1   -     anthropic  not created yet  preparing  -               0      0         0 to send  $0.00  \(prepared)  -          -

                """)
        let line = try #require(try Self.json(batches) as? [[String: Any]]).first
        #expect(line?["id"] as? String == "ob000000000001" && line?.keys.contains("host") == false)
    }

    /// `value` as `--json` prints it, parsed back.
    static func json(_ value: some Encodable) throws -> Any {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return try JSONSerialization.jsonObject(with: try encoder.encode(value))
    }
}
