import Foundation
import OffpeakTestSupport
import PostgresNIO
import Testing

@testable import Offpeak

/// The store's connections lent to threads (`PostgresStore`, `PostgresPool`): a read never queues
/// behind another thread's transaction, a thread reads what it sent, and the pool keeps its cap.
@Suite(.ownThreads) struct PostgresPoolTests {
    /// Runs `body` on a thread of its own; `wait` returns what it threw, or nil, once it is done.
    final class Side: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var failure: (any Error)?

        init(_ body: @escaping @Sendable () throws -> Void) {
            Thread.detachNewThread { [self] in
                do { try body() } catch { failure = error }
                done.signal()
            }
        }

        /// Whether it ended within `seconds`, and what it threw.
        func wait(seconds: Double = 20) -> (ended: Bool, failure: (any Error)?) {
            let ended = done.wait(timeout: .now() + seconds) == .success
            return (ended, ended ? failure : nil)
        }
    }

    static func count(_ store: PostgresStore) throws -> Int {
        try PostgresStoreTests.values(store, "SELECT count(*)::bigint FROM t", as: Int.self).first ?? -1
    }

    @Test func aReadDoesNotWaitForAnotherThreadsTransaction() throws {
        let store = try PostgresStoreTests.connect()
        defer { store.close() }
        try PostgresPipelineTests.table(store)
        let inside = DispatchSemaphore(value: 0)
        let read = DispatchSemaphore(value: 0)
        let writer = Side {
            try store.transaction { () throws(OffpeakError) in
                try store.query("INSERT INTO t VALUES (1, 'one')")
                inside.signal()
                // Held open until the read is done: with one connection the read would queue
                // behind this transaction, and both would wait forever.
                guard read.wait(timeout: .now() + 20) == .success else {
                    throw OffpeakError(.software, "the read waited for the transaction")
                }
            }
        }
        #expect(inside.wait(timeout: .now() + 20) == .success)
        #expect(try Self.count(store) == 0, "the read sees what was committed, not the open transaction")
        read.signal()
        let ended = writer.wait()
        #expect(ended.ended && ended.failure == nil, "\(String(describing: ended.failure))")
        #expect(try Self.count(store) == 1)
    }

    @Test func aThreadReadsWhatItsTransactionSentWholeWroteOnAnotherConnection() throws {
        let store = try PostgresStoreTests.connect()
        defer { store.close() }
        try PostgresPipelineTests.table(store)
        // The COMMIT comes back a moment after it was sent: the statement before it sleeps.
        let (_, sent) = try store.transactionSent { () throws(OffpeakError) in
            try store.send("INSERT INTO t VALUES (1, 'one')")
            try store.send("SELECT pg_sleep(0.5)")
        }
        // Another thread takes the connection the transaction went on, so this thread's next read
        // goes on a new one, which must wait for the COMMIT to read the row.
        let taken = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let other = Side {
            try store.pinned { () throws(OffpeakError) in
                taken.signal()
                _ = release.wait(timeout: .now() + 20)
            }
        }
        #expect(taken.wait(timeout: .now() + 20) == .success)
        #expect(try Self.count(store) == 1)
        release.signal()
        #expect(other.wait().ended)
        try sent.wait()
    }

    @Test func threadsShareAtMostTheCapOfConnectionsAndAllGetOne() throws {
        let store = try PostgresStoreTests.connect()
        defer { store.close() }
        try PostgresPipelineTests.table(store)
        let threads = PostgresPool.maximumLinks + 3
        let sides = (0..<threads).map { index in
            Side {
                try store.transaction { () throws(OffpeakError) in
                    try store.query("INSERT INTO t VALUES (\(index), 'side')")
                    try store.query("SELECT pg_sleep(0.2)")
                }
            }
        }
        for side in sides {
            let ended = side.wait()
            #expect(ended.ended && ended.failure == nil, "\(String(describing: ended.failure))")
        }
        #expect(try Self.count(store) == threads)
        let open = try PostgresStoreTests.values(
            store,
            "SELECT count(*)::bigint FROM pg_stat_activity WHERE datname = current_database()",
            as: Int.self)
        #expect(open.first == PostgresPool.maximumLinks, "every connection the pool opened is still open")
    }

    @Test func aConnectionLostWhileIdleIsReplacedAfterItsFault() throws {
        let cluster = PostgresCluster.shared
        let store = try PostgresStoreTests.connect(cluster: cluster)
        defer { store.close() }
        let database = store.url.database
        try cluster.psql(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(database)'",
            database: "postgres")
        let lost = #expect(throws: OffpeakError.self) { try store.query("SELECT 1") }
        #expect(lost?.status == .temporaryFailure)
        let one = try PostgresStoreTests.values(store, "SELECT 1::bigint", as: Int.self)
        #expect(one == [1], "the next statement goes on a new connection")
    }
}
