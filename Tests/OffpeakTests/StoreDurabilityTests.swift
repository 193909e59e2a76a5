import Foundation
import GRDB
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// A commit that records a paid answer outlives a power cut (issue 21, item 5): the store's writer
/// flushes the WAL at every commit (`synchronous = FULL`), where GRDB's default for a WAL pool
/// (`NORMAL`) survives only the process dying.
@Suite(.ownThreads) struct StoreDurabilityTests {
    // SQLite only: SQLite's own journal mode and synchronous pragma.
    @Test(.sqliteOnly) func everyCommitIsFlushedToTheDisk() throws {
        let workspace = try TemporaryWorkspace()
        let store = try StoreTests.store(workspace)
        let level = try store.sqlite.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        #expect(level == 2, "FULL is 2; NORMAL, GRDB's default in WAL mode, is 1")
        let mode = try store.sqlite.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        #expect(mode == "wal")
        // Opened again (as each command does), the writer is durable again.
        let again = try Store.open(Workspace(root: workspace.root))
        #expect(try again.sqlite.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") } == 2)
    }
}
