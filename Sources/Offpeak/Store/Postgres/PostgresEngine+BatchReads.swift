import Foundation
import PostgresNIO

/// What the batch lane and the reports read of provider batches on PostgreSQL, as the SQLite engine
/// reads them (`SQLiteStore+Batches`, `SQLiteStore+BatchReads`). Custom ids and batch ids sort byte by byte
/// (`COLLATE "C"`), as SQLite sorts text, whatever the database's collation.
extension PostgresEngine {
    func batchesToPoll(now: Date) throws(OffpeakError) -> [BatchRecord] {
        try batches(
            store.query(
                """
                SELECT \(unescaped: Self.batchColumns) FROM provider_batches
                WHERE state IN \(unescaped: SQLStates.batches(.submitted, .ended)) AND next_poll_at <= \(now)
                ORDER BY next_poll_at
                """))
    }

    func preparingBatches() throws(OffpeakError) -> [BatchRecord] {
        try batches(
            store.query(
                """
                SELECT \(unescaped: Self.batchColumns) FROM provider_batches
                WHERE state = \(unescaped: SQLStates.batch(.preparing)) ORDER BY prepared_at
                """))
    }

    func batch(id: String) throws(OffpeakError) -> BatchRecord? {
        try store.query("SELECT \(unescaped: Self.batchColumns) FROM provider_batches WHERE id = \(id)")
            .first.map { row throws(OffpeakError) in try batch(row) }
    }

    func batches(runID: String) throws(OffpeakError) -> [BatchRecord] {
        try batches(
            store.query(
                """
                SELECT \(unescaped: Self.batchColumns) FROM provider_batches WHERE run_id = \(runID)
                ORDER BY prepared_at
                """))
    }

    func items(batchID: String) throws(OffpeakError) -> [BatchItemRecord] {
        var items: [BatchItemRecord] = []
        for row in try store.query(
            """
            SELECT \(unescaped: Self.itemColumns) FROM batch_items WHERE batch_id = \(batchID)
            ORDER BY custom_id COLLATE "C", slot
            """)
        {
            items.append(try item(row))
        }
        return items
    }

    func openBatchLoad(runID: String) throws(OffpeakError) -> Spend {
        var load = Spend()
        guard
            let row = try store.query(
                """
                SELECT coalesce(sum(requests), 0)::bigint, coalesce(sum(worst_input_tokens), 0)::bigint,
                    coalesce(sum(worst_output_tokens), 0)::bigint, coalesce(sum(worst_dollars), 0)::float8
                FROM provider_batches WHERE run_id = \(runID) AND state IN \(unescaped: SQLStates.openBatches)
                """
            ).first
        else { return load }
        (load.calls, load.inputTokens, load.outputTokens, load.dollars) = try store.decode(
            row, as: (Int, Int, Int, Double).self)
        return load
    }

    func hasOpenBatches(runID: String) throws(OffpeakError) -> Bool {
        try exists(
            """
            SELECT EXISTS (SELECT 1 FROM provider_batches
                WHERE run_id = \(runID) AND state IN \(unescaped: SQLStates.openBatches))
            """)
    }

    func openBatches() throws(OffpeakError) -> [BatchRecord] {
        try batches(
            store.query(
                """
                SELECT \(unescaped: Self.batchColumns) FROM provider_batches
                WHERE state IN \(unescaped: SQLStates.openBatches) ORDER BY prepared_at
                """))
    }

    func batchCalls(batchID: String) throws(OffpeakError) -> [(customID: String, requests: [RequestRecord])] {
        let rows = try store.query(
            """
            SELECT i.custom_id, \(unescaped: Self.qualified(Self.requestColumns, by: "r")) FROM batch_items i
            JOIN requests r ON r.id = i.request_id
            WHERE i.batch_id = \(batchID) ORDER BY i.custom_id COLLATE "C", i.slot
            """)
        var customIDs: [String] = []
        for row in rows { customIDs.append(try PostgresColumns(row, store)("custom_id")) }
        return BatchItemRecord.calls(Array(zip(customIDs, try requests(rows))))
    }

    func knownRemoteIDs() throws(OffpeakError) -> Set<String> {
        var ids = Set<String>()
        for row in try store.query("SELECT remote_id FROM provider_batches WHERE remote_id IS NOT NULL") {
            ids.insert(try store.decode(row, as: String.self))
        }
        return ids
    }

    func nextBatchPollOnly(runID: String, now: Date) throws(OffpeakError) -> Date? {
        let work = try exists(
            """
            SELECT EXISTS (SELECT 1 FROM requests
                WHERE run_id = \(runID) AND state IN \(unescaped: SQLStates.unsent))
            """)
        guard !work else { return nil }
        let open = try batches(
            store.query(
                """
                SELECT \(unescaped: Self.batchColumns) FROM provider_batches
                WHERE run_id = \(runID) AND state IN \(unescaped: SQLStates.openBatches)
                """))
        return BatchRecord.onlyPollAhead(open: open, now: now)
    }

    func batchListings(all: Bool, limit: Int?) throws(OffpeakError) -> [BatchListing] {
        var listings: [BatchListing] = []
        for row in try store.query(
            """
            SELECT \(unescaped: Self.qualified(Self.batchColumns, by: "b")), r.job AS job FROM provider_batches b
            JOIN runs r ON r.id = b.run_id
            WHERE \(all) OR b.state IN \(unescaped: SQLStates.openBatches)
            ORDER BY b.prepared_at DESC, b.id COLLATE "C" LIMIT \(limit)
            """)
        {
            listings.append(BatchListing(batch: try batch(row), job: try PostgresColumns(row, store)("job")))
        }
        return listings
    }

    func batchCount() throws(OffpeakError) -> Int {
        try count("SELECT count(*) FROM provider_batches")
    }

    func requestsInBatch(runID: String) throws(OffpeakError) -> Int {
        try count(
            """
            SELECT count(*) FROM requests
            WHERE run_id = \(runID) AND state = \(RequestRecord.State.inBatch.rawValue)
            """)
    }

    private func exists(_ query: PostgresQuery) throws(OffpeakError) -> Bool {
        try store.query(query).first.map { row throws(OffpeakError) in try store.decode(row, as: Bool.self) }
            ?? false
    }

    private func count(_ query: PostgresQuery) throws(OffpeakError) -> Int {
        try store.query(query).first.map { row throws(OffpeakError) in try store.decode(row, as: Int.self) }
            ?? 0
    }
}
