import Foundation
import GRDB
import Logging
import OffpeakTestSupport
import Synchronization
import Testing

@testable import Offpeak

/// How many store transactions an answered call costs. Each is a lock, a snapshot and (for a
/// write) an fsync on SQLite, and a network round trip on a shared store, so the run loop's talk
/// with the store is held to what it needs: the commit returns what its caller reads next.
@Suite(.ownThreads) struct StoreChatterTests {
    /// The transactions (reads and writes) a run of `documents` one-call items makes, and of them
    /// those that asked the shared limits for a call's slot (`in_flight` is set, so it is shared)
    /// and those that wrote a call down before it was sent (`LostCalls`).
    static func transactions(documents: Int) throws -> (all: Int, limits: Int, intents: Int) {
        let sim = try SimProcess()
        let workspace = try JobRunnerIntegrationTests.workspace(sim: sim, documents: documents)
        try workspace.oneCallInFlight()  // one call at a time: the count is the same every run
        let context = try JobRunnerIntegrationTests.context(workspace)
        let url = context.workspace.databaseURL
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let begun = Mutex(0)
        let granted = Mutex(0)
        let intents = Mutex(0)
        let store = try Store(url: url) { db in
            db.trace(options: .statement) { event in
                guard case .statement(let statement) = event else { return }
                let sql = statement.sql.uppercased()
                if sql.hasPrefix("BEGIN") { begun.withLock { $0 += 1 } }
                if sql.hasPrefix("INSERT INTO LIMIT_GRANTS") { granted.withLock { $0 += 1 } }
                if sql.hasPrefix("INSERT INTO BUDGET_RESERVATIONS") { intents.withLock { $0 += 1 } }
            }
        }
        let outcome = try context.run(try context.loadJob("docs"), options: JobRunner.Options(), store: store)
        #expect(outcome.run.itemsDone == documents)
        return (begun.withLock { $0 }, granted.withLock { $0 }, intents.withLock { $0 })
    }

    /// Each further answered call adds the same number of transactions: its commit (with its
    /// answers for the cache), which reads back the run's counts and spend that the next call is
    /// judged by. One; two before the pass kept the spend its commits read back instead of reading
    /// it before every call, six before the commit returned the run's counts and spend (a read of
    /// the run and one of its spend followed every commit), four before a pass kept its models'
    /// measured speed for a second (`RecentReads`) instead of reading it for every call's timeout,
    /// three before the cache's entries were written in the commit's transaction.
    ///
    /// A limit set in offpeak.yaml is shared through the store: with `in_flight` set, each call
    /// also asks for its slot in one transaction (the slot of the call before goes back in it), so
    /// that one is counted apart. So is the one that writes the call down before it is sent, so a
    /// kill cannot take it out of the ledger (`LostCalls`); it is committed without its own `fsync`.
    @Test func anAnsweredCallCostsOneStoreTransaction() throws {
        let (four, fourGrants, fourIntents) = try Self.transactions(documents: 4)
        let (eight, eightGrants, eightIntents) = try Self.transactions(documents: 8)
        #expect(eightGrants - fourGrants == 4, "one slot asked for per call")
        #expect((fourIntents, eightIntents) == (4, 8), "each call written down once")
        let (commits4, commits8) = (four - fourGrants - fourIntents, eight - eightGrants - eightIntents)
        #expect(
            (commits8 - commits4) % 4 == 0, "the same count per call (\(commits4) for 4, \(commits8) for 8)")
        #expect((commits8 - commits4) / 4 == 1, "\(commits4) transactions for 4 calls, \(commits8) for 8")
    }
}
