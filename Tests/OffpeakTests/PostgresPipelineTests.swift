import Foundation
import OffpeakTestSupport
import PostgresNIO
import Testing

@testable import Offpeak

/// Statements sent without waiting (`PostgresStore.send`): their failures are not lost, and they
/// roll back the transaction they were sent in.
@Suite(.ownThreads) struct PostgresPipelineTests {
    static func table(_ store: PostgresStore) throws {
        try store.query("CREATE TABLE t (id integer PRIMARY KEY, note text NOT NULL)")
    }

    static func ids(_ store: PostgresStore) throws -> [Int] {
        try PostgresStoreTests.values(store, "SELECT id FROM t ORDER BY id", as: Int.self)
    }

    @Test func sentStatementsCommitWithTheTransaction() throws {
        let store = try PostgresStoreTests.connect()
        defer { store.close() }
        try Self.table(store)
        let read = try store.transaction { () throws(OffpeakError) -> [Int] in
            try store.send("INSERT INTO t VALUES (1, 'one')")
            try store.send("INSERT INTO t VALUES (2, 'two')")
            return try store.query("SELECT id FROM t ORDER BY id").map {
                row throws(OffpeakError) -> Int in try store.decode(row, as: Int.self)
            }
        }
        #expect(read == [1, 2])  // a query sees what was sent before it
        #expect(try Self.ids(store) == [1, 2])
    }

    @Test func aSentStatementThatFailsIsThrownByTheNextQueryAndRollsBackTheTransaction() throws {
        let store = try PostgresStoreTests.connect()
        defer { store.close() }
        try Self.table(store)
        try store.query("INSERT INTO t VALUES (1, 'one')")
        var reachedQuery = false
        let error = #expect(throws: OffpeakError.self) {
            try store.transaction { () throws(OffpeakError) in
                try store.send("INSERT INTO t VALUES (2, 'two')")
                try store.send("INSERT INTO t VALUES (1, 'again')")  // the key is taken
                try store.send("INSERT INTO t VALUES (3, 'three')")
                reachedQuery = true
                try store.query("SELECT 1")
            }
        }
        #expect(reachedQuery)
        // The first failure is the one reported, not the aborted transaction's later refusals.
        #expect(error?.description.contains("duplicate key") == true)
        #expect(try Self.ids(store) == [1])
        // The connection goes on.
        try store.query("INSERT INTO t VALUES (4, 'four')")
        #expect(try Self.ids(store) == [1, 4])
    }

    @Test func aSentStatementThatFailsIsThrownByTheCommitWhenNoQueryFollows() throws {
        let store = try PostgresStoreTests.connect()
        defer { store.close() }
        try Self.table(store)
        #expect(throws: OffpeakError.self) {
            try store.transaction { () throws(OffpeakError) in
                try store.send("INSERT INTO t VALUES (1, 'one')")
                try store.send("INSERT INTO t VALUES (2, NULL)")  // note is NOT NULL
            }
        }
        #expect(try Self.ids(store) == [])
    }

    @Test func outsideATransactionASentStatementRunsAtOnce() throws {
        let store = try PostgresStoreTests.connect()
        defer { store.close() }
        try Self.table(store)
        try store.send("INSERT INTO t VALUES (1, 'one')")
        #expect(try Self.ids(store) == [1])
        #expect(throws: OffpeakError.self) { try store.send("INSERT INTO t VALUES (1, 'again')") }
    }

    @Test func aTransactionSentWholeIsReadLaterAndWhatFollowsSeesIt() throws {
        let store = try PostgresStoreTests.connect()
        defer { store.close() }
        try Self.table(store)
        let (count, sent) = try store.transactionSent { () throws(OffpeakError) -> PostgresStore.SentRows in
            try store.send("INSERT INTO t VALUES (1, 'one')")
            try store.send("INSERT INTO t VALUES (2, 'two')")
            return try store.sendReading("SELECT count(*) FROM t")
        }
        // What runs next on the connection runs after the COMMIT.
        #expect(try Self.ids(store) == [1, 2])
        try sent.wait()
        let rows = try count.get()
        #expect(
            try rows.map { row throws(OffpeakError) -> Int in try store.decode(row, as: Int.self) } == [2])
    }

    @Test func aTransactionSentWholeThatFailsWritesNothingAndSaysSoWhenWaitedFor() throws {
        let store = try PostgresStoreTests.connect()
        defer { store.close() }
        try Self.table(store)
        try store.query("INSERT INTO t VALUES (1, 'one')")
        let (_, sent) = try store.transactionSent { () throws(OffpeakError) in
            try store.send("INSERT INTO t VALUES (2, 'two')")
            try store.send("INSERT INTO t VALUES (1, 'again')")  // the key is taken
            try store.send("INSERT INTO t VALUES (3, 'three')")
        }
        // The connection goes on: its next statement runs after the rolled-back transaction.
        try store.query("INSERT INTO t VALUES (4, 'four')")
        let error = #expect(throws: OffpeakError.self) { try sent.wait() }
        #expect(error?.description.contains("duplicate key") == true)
        #expect(try Self.ids(store) == [1, 4])
    }

    @Test func aTransactionSentWholeWhoseBodyThrowsIsRolledBack() throws {
        let store = try PostgresStoreTests.connect()
        defer { store.close() }
        try Self.table(store)
        #expect(throws: OffpeakError.self) {
            _ = try store.transactionSent { () throws(OffpeakError) in
                try store.send("INSERT INTO t VALUES (1, 'one')")
                throw OffpeakError(.software, "the body gave up")
            }
        }
        #expect(try Self.ids(store) == [])
        // Nested in a transaction, the body joins it, and the outer one commits it.
        try store.transaction { () throws(OffpeakError) in
            let (_, sent) = try store.transactionSent { () throws(OffpeakError) in
                try store.send("INSERT INTO t VALUES (5, 'five')")
            }
            try sent.wait()
        }
        #expect(try Self.ids(store) == [5])
    }
}
