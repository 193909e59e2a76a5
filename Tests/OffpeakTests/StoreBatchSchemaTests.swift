import Foundation
import GRDB
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// v7 and v8 on a store that already holds work, and the batch lane's queries reading indexes.
@Suite(.ownThreads) struct StoreBatchSchemaTests {
    @Test func aV6StoreUpgradesToV8KeepingItsWorkAndGainingTheBatchTables() throws {
        let workspace = try TemporaryWorkspace()
        let url = Workspace(root: workspace.root).databaseURL
        try StoreUpgradeTests.makeV5Store(at: url)
        let queue = try DatabaseQueue(path: url.path)
        try StoreMigrations.migrator.migrate(
            queue,
            upTo: "v6: indexes for every report and the run loop, item and spend counters kept by triggers, "
                + "the cache's byte total")
        #expect(
            try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM provider_batches") } == 0)
        try queue.close()

        let store = try Store(url: url)
        let columns = try store.sqlite.read { db in try db.columns(in: "provider_batches").map(\.name) }
        #expect(
            columns == [
                "id", "run_id", "provider", "model", "remote_id", "state", "prepared_at", "submitted_at",
                "ended_at", "collected_at", "next_poll_at", "worst_dollars", "error", "requests", "items",
                "remote_status", "counts", "expires_at", "polls", "worst_input_tokens", "worst_output_tokens",
                "poll_failures", "poll_error", "host",
            ])
        let itemColumns = try store.sqlite.read { db in try db.columns(in: "batch_items").map(\.name) }
        #expect(itemColumns == ["batch_id", "request_id", "custom_id", "slot", "outcome"])
        #expect(
            try store.runs.itemCounts(runID: "r1")
                == ItemCounts(requests: 6, total: 4, done: 2, failed: 1, cached: 1))
        #expect(try store.sqlite.read { db in try LedgerEntry.fetchCount(db) } == 5)
        // The upgraded store takes a batch of its pending requests.
        let pending = try store.runs.pendingRequests(runID: "r1", limit: 10)
        let batch = try store.batches.prepareBatch(
            runID: "r1", provider: "anthropic", model: "m", requestIDs: pending.map(\.id), worstDollars: 1,
            now: Date())
        #expect(try store.batches.items(batchID: batch.id).map(\.requestId) == pending.map(\.id))
    }

    /// v12 on a store with a batch out: it starts with no failed polls, and counts them from there.
    @Test func aV11StoresBatchOutGainsPollFailuresAtZero() throws {
        let workspace = try TemporaryWorkspace()
        let url = Workspace(root: workspace.root).databaseURL
        try StoreUpgradeTests.makeV5Store(at: url)
        let queue = try DatabaseQueue(path: url.path)
        try StoreMigrations.migrator.migrate(queue, upTo: "v11: budget reservations of calls in flight")
        try queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO provider_batches (id, run_id, provider, model, remote_id, state, prepared_at)
                    VALUES ('ob000000000001', 'r1', 'anthropic', 'm', 'msgbatch_1', 'ended', '2026-01-01 00:00:00.000')
                    """)
        }
        try queue.close()
        let store = try Store(url: url)
        let batch = try #require(try store.batches.batch(id: "ob000000000001"))
        #expect(batch.pollFailures == 0 && batch.pollError == nil && !batch.isFailing)
        for _ in 0..<BatchRecord.failuresShown {
            try store.batches.recordPollFailure(batchID: batch.id, reason: "HTTP 404", next: Date())
        }
        let failing = try #require(try store.batches.batch(id: batch.id))
        #expect(failing.pollFailures == 3 && failing.pollError == "HTTP 404" && failing.isFailing)
    }

    @Test func theBatchLanesQueriesUseIndexes() throws {
        let (store, statements) = try StoreQueryPlanTests.traced { store, _ in
            let pending = try store.runs.pendingRequests(runID: "r1", limit: 3)
            let batch = try store.batches.prepareBatch(
                runID: "r1", provider: "anthropic", model: "m", requestIDs: pending.map(\.id),
                worstDollars: 1,
                now: Date())
            try store.batches.recordSubmitted(batchID: batch.id, remoteID: "x", now: Date(), nextPoll: Date())
            _ = try store.batches.batchesToPoll(now: Date())
            _ = try store.batches.preparingBatches()
            _ = try store.batches.batches(runID: "r1")
            _ = try store.batches.items(batchID: batch.id)
            try store.batches.markEnded(batchID: batch.id, now: Date())
            try store.batches.reschedulePoll(batchID: batch.id, next: Date())
            try store.batches.recordPollFailure(batchID: batch.id, reason: "HTTP 404", next: Date())
            try store.batches.clearPollFailures(batchID: batch.id)
            try store.batches.commitBatchCall(
                batchID: batch.id, customID: "\(batch.id)_0", .again(.expired, reason: "expired"), run: nil,
                now: Date()
            )
            _ = try store.batches.markCollected(batchID: batch.id, now: Date())
            let more = try store.runs.pendingRequests(runID: "r1", limit: 2)
            let unsent = try store.batches.prepareBatch(
                runID: "r1", provider: "anthropic", model: "m", requestIDs: more.map(\.id), worstDollars: 1,
                now: Date())
            try store.batches.abandonPreparing(batchID: unsent.id, reason: "never created", now: Date())
        }
        let plans = try StoreQueryPlanTests.expectIndexed(store, statements)
        // A scan of a partial index reads only the rows it holds (the preparing batches): fine.
        let steps = plans.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        for table in ["provider_batches", "batch_items"] {
            let scans = steps.filter {
                $0.hasPrefix("SCAN \(table)") && !$0.contains("USING INDEX provider_batches_")
            }
            #expect(scans.isEmpty, "\(plans)")
        }
        for index in [
            "provider_batches_to_poll", "provider_batches_preparing", "provider_batches_by_run",
            "sqlite_autoindex_batch_items_1",
        ] {
            #expect(plans.contains(index), "no plan uses \(index):\n\(plans)")
        }
        #expect(!plans.contains("TEMP B-TREE"), "\(plans)")
    }
}
