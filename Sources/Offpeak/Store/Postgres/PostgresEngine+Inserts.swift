import Foundation
import PostgresNIO

/// Requests written many at a time: one statement per chunk, each column bound as one array and
/// spread by `unnest`, so a run of 100,000 requests takes a few round trips, not 100,000.
///
/// postgres-nio binds no array with NULL elements, so a nullable column travels as two arrays: its
/// values (a placeholder where there is none) and whether each row has one.
extension PostgresEngine {
    /// Rows per statement: a chunk of W-inbox requests binds a few megabytes.
    static let insertChunk = 2_000

    /// What a request row written over one already there does.
    enum Conflict {
        /// Leaves out a request whose run already has its item.
        case skipKnownItem
        /// Writes every column of the row with the same id, its payload whole (as GRDB's `update`).
        case replaceByID
    }

    /// Inserts `records`, leaving out any whose run already has its item (`ON CONFLICT DO NOTHING`),
    /// or (`replaceByID`) writes them over the rows with their ids.
    /// - Parameter whole: payloads are written whole, as SQLite's plain inserts and updates write
    ///   them (a step's, a changed spec's), not with their system prompt by reference.
    /// - Returns: the ids of the requests written, once each.
    @discardableResult
    func insertRequests(_ records: [RequestRecord], conflict: Conflict = .skipKnownItem, whole: Bool = false)
        throws(OffpeakError) -> [String]
    {
        var added: [String] = []
        var start = 0
        while start < records.count {
            let chunk = records[start..<min(records.count, start + Self.insertChunk)]
            start = chunk.endIndex
            for record in chunk
            where
                !(StoredDate.isStorable(record.createdAt) && StoredDate.isStorable(record.updatedAt)
                && record.nextAttemptAt.map(StoredDate.isStorable) != false)
            {
                try StoredDate.check(record)
            }
            let payloads =
                whole || conflict == .replaceByID
                ? chunk.map(\.payload) : try storedPayloads(chunk.map(\.payload))
            let rows = try store.query(
                """
                INSERT INTO requests (\(unescaped: Self.requestColumns))
                SELECT id, run_id, job, item_id, position, source, CASE WHEN has_client THEN client_id END,
                    tier, payload, cache_key, state, attempts, CASE WHEN has_next THEN next_at END,
                    CASE WHEN has_error THEN error END, created_at, updated_at, cache_policy,
                    CASE WHEN has_sources THEN sources END, CASE WHEN has_tags THEN tags END
                FROM unnest(\(chunk.map(\.id))::text[], \(chunk.map(\.runId))::text[],
                    \(chunk.map(\.job))::text[], \(chunk.map(\.itemId))::text[], \(chunk.map(\.position))::bigint[],
                    \(chunk.map(\.source.rawValue))::text[], \(chunk.map { $0.clientId ?? "" })::text[],
                    \(chunk.map { $0.clientId != nil })::boolean[], \(chunk.map(\.tier))::text[],
                    \(payloads)::text[], \(chunk.map(\.cacheKey))::text[], \(chunk.map(\.state.rawValue))::text[],
                    \(chunk.map(\.attempts))::bigint[], \(chunk.map { $0.nextAttemptAt ?? Self.none })::timestamptz[],
                    \(chunk.map { $0.nextAttemptAt != nil })::boolean[], \(chunk.map { $0.error ?? "" })::text[],
                    \(chunk.map { $0.error != nil })::boolean[], \(chunk.map(\.createdAt))::timestamptz[],
                    \(chunk.map(\.updatedAt))::timestamptz[], \(chunk.map(\.cachePolicy.rawValue))::text[],
                    \(chunk.map { $0.sources ?? "" })::text[], \(chunk.map { $0.sources != nil })::boolean[],
                    \(chunk.map { $0.tags ?? "" })::text[], \(chunk.map { $0.tags != nil })::boolean[])
                    AS t(id, run_id, job, item_id, position, source, client_id, has_client, tier, payload,
                        cache_key, state, attempts, next_at, has_next, error, has_error, created_at, updated_at,
                        cache_policy, sources, has_sources, tags, has_tags)
                \(unescaped: conflict == .replaceByID ? Self.replaceClause : "ON CONFLICT (run_id, item_id) DO NOTHING")
                RETURNING id
                """)
            for row in rows { added.append(try store.decode(row, as: String.self)) }
        }
        return added
    }

    /// Inserts requests their run must not have yet (a run's new requests, a spec's new items).
    /// - Throws: a software error when the run already has one's item, as a plain insert would fail.
    func insertNewRequests(_ records: [RequestRecord], whole: Bool = false) throws(OffpeakError) {
        let added = try insertRequests(records, whole: whole)
        guard added.count < records.count else { return }
        // One the run had before, else the second of two for one item.
        let written = Set(added)
        var items: Set<[UInt8]> = []
        let record =
            records.first { !written.contains($0.id) }
            ?? records.first { !items.insert(Array(($0.runId + "\u{0}" + $0.itemId).utf8)).inserted }
        throw OffpeakError(
            .software,
            "run \(record?.runId ?? "?") already has a request for item \(record?.itemId ?? "?")")
    }

    static let replaceClause =
        "ON CONFLICT (id) DO UPDATE SET "
        + requestColumns.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        .filter { $0 != "id" }.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")

    /// A placeholder for a time a row does not have (its flag says so).
    static let none = Date(timeIntervalSince1970: 0)
}
