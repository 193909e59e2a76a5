import Foundation
import OffpeakTestSupport
import Testing

/// The multi-host suites run once more behind pgbouncer (`make test`'s third pass,
/// `OFFPEAK_TEST_POOLER=pgbouncer`): this says they truly went through it.
@Suite(.ownThreads) struct PoolerTests {
    @Test(.enabled(if: PgBouncer.inUse, "only behind the pooler"))
    func theWorkspacesStoreIsReachedThroughThePooler() throws {
        let sim = try SimProcess()
        let workspace = try TickTests.queueWorkspace(sim)
        let store = try #require(try workspace.storeEnvironment()["OFFPEAK_STORE"])
        #expect(store.contains("127.0.0.1:\(PgBouncer.shared.port)/"), "\(store)")
        #expect(try workspace.offpeak(["tick"]).status == 0)
        // The pooler's own count of the clients it served this database.
        let database = try #require(store.split(separator: "/").last?.split(separator: "?").first)
        let pools = try PgBouncer.shared.show("POOLS")
        #expect(pools.contains { $0.hasPrefix("\(database)|") }, "\(pools)")
    }
}
