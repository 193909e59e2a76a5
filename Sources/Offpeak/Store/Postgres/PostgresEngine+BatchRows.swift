import Foundation
import PostgresNIO

/// Provider batches and their items, rows to records: the columns named once, in the order the
/// statements list them, as `PostgresEngine+Rows` does for runs and requests.
extension PostgresEngine {
    static let batchColumns = """
        id, run_id, provider, model, remote_id, state, prepared_at, submitted_at, ended_at, collected_at,
        next_poll_at, worst_dollars, error, requests, items, remote_status, counts, expires_at, polls,
        worst_input_tokens, worst_output_tokens, poll_failures, poll_error, host
        """

    /// `columns` (a list as `batchColumns`) each prefixed with `table`'s alias, for joins.
    static func qualified(_ columns: String, by table: String) -> String {
        columns.split(separator: ",").map { table + "." + $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .joined(separator: ", ")
    }

    static let itemColumns = "batch_id, request_id, custom_id, slot, outcome"

    func batch(_ row: PostgresRow) throws(OffpeakError) -> BatchRecord {
        let column = PostgresColumns(row, store)
        var batch = BatchRecord(
            id: try column("id"), runId: try column("run_id"), provider: try column("provider"),
            model: try column("model"), remoteId: try column("remote_id"),
            state: try column.value("state", as: BatchRecord.State.self),
            preparedAt: try column("prepared_at"),
            submittedAt: try column("submitted_at"), endedAt: try column("ended_at"),
            collectedAt: try column("collected_at"), nextPollAt: try column("next_poll_at"),
            worstDollars: try column("worst_dollars"), error: try column("error"))
        batch.requests = try column("requests")
        batch.items = try column("items")
        batch.remoteStatus = try column("remote_status")
        batch.counts = try (try column("counts", as: String?.self)).map { text throws(OffpeakError) in
            try Self.counts(text, endpoint: store.url.endpoint)
        }
        batch.expiresAt = try column("expires_at")
        batch.polls = try column("polls")
        batch.worstInputTokens = try column("worst_input_tokens")
        batch.worstOutputTokens = try column("worst_output_tokens")
        batch.pollFailures = try column("poll_failures")
        batch.pollError = try column("poll_error")
        batch.host = try column("host")
        return batch
    }

    func batches(_ rows: [PostgresRow]) throws(OffpeakError) -> [BatchRecord] {
        var batches: [BatchRecord] = []
        batches.reserveCapacity(rows.count)
        for row in rows { batches.append(try batch(row)) }
        return batches
    }

    func item(_ row: PostgresRow) throws(OffpeakError) -> BatchItemRecord {
        let column = PostgresColumns(row, store)
        return BatchItemRecord(
            batchId: try column("batch_id"), requestId: try column("request_id"),
            customId: try column("custom_id"), slot: try column("slot"),
            outcome: try column.value("outcome", as: BatchItemRecord.Outcome?.self))
    }

    /// A poll's counts as the `counts` column holds them: JSON with sorted keys, as the SQLite
    /// engine's records write them.
    static func countsText(_ counts: RemoteBatch.Counts?) throws(OffpeakError) -> String? {
        guard let counts else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        do { return String(decoding: try encoder.encode(counts), as: UTF8.self) } catch {
            throw OffpeakError(.software, "cannot encode a provider batch's counts", cause: "\(error)")
        }
    }

    private static func counts(_ text: String, endpoint: String) throws(OffpeakError) -> RemoteBatch.Counts {
        do { return try JSONDecoder().decode(RemoteBatch.Counts.self, from: Data(text.utf8)) } catch {
            throw OffpeakError(
                .ioError, "PostgreSQL at \(endpoint) answered a row offpeak cannot read (column counts)",
                cause: "\(error)")
        }
    }
}
