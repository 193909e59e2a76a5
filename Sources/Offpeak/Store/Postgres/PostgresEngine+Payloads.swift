import Foundation
import PostgresNIO

/// Payloads as the rows hold them, the same bytes as the SQLite engine's: a system prompt worth
/// sharing is kept once in `shared_texts` and named by its hash (`StoredPayload`). Texts are
/// written, and read, one statement for many requests.
extension PostgresEngine {
    /// `payloads` in their stored form, the texts they name added to `shared_texts` (one statement).
    func storedPayloads(_ payloads: [String]) throws(OffpeakError) -> [String] {
        var sharing = StoredPayload.Sharing()
        var texts: [String: String] = [:]
        var rows: [String] = []
        rows.reserveCapacity(payloads.count)
        for payload in payloads {
            guard let (row, hash) = sharing.stored(payload) else {
                rows.append(payload)
                continue
            }
            if texts[hash] == nil, let text = sharing.text { texts[hash] = text }
            rows.append(row)
        }
        if !texts.isEmpty {
            try store.query(
                """
                INSERT INTO shared_texts (hash, text)
                SELECT * FROM unnest(\(Array(texts.keys))::text[], \(Array(texts.values))::text[])
                ON CONFLICT (hash) DO NOTHING
                """)
        }
        return rows
    }

    /// `records` with whole payloads, the texts they name read in one statement.
    /// - Throws: a data error when a text a payload names is not in the store.
    func expand(_ records: [RequestRecord]) throws(OffpeakError) -> [RequestRecord] {
        var records = records
        var parts: [(index: Int, prefix: Substring, hash: String, suffix: Substring)] = []
        var texts: [String: String] = [:]
        var wanted: Set<String> = []
        for index in records.indices {
            guard let split = StoredPayload.reference(in: records[index].payload) else { continue }
            parts.append((index, split.prefix, split.hash, split.suffix))
            if texts[split.hash] == nil {
                if let text = StoredPayload.knownText(split.hash) {
                    texts[split.hash] = text
                } else {
                    wanted.insert(split.hash)
                }
            }
        }
        if !wanted.isEmpty {
            let rows = try store.query(
                "SELECT hash, text FROM shared_texts WHERE hash = ANY(\(Array(wanted))::text[])")
            for row in rows {
                let (hash, text) = try store.decode(row, as: (String, String).self)
                StoredPayload.remember(text, hash: hash)
                texts[hash] = text
            }
        }
        for part in parts {
            guard let text = texts[part.hash] else { throw StoredPayload.missing(part.hash) }
            records[part.index].payload = StoredPayload.whole(part.prefix, text, part.suffix)
        }
        return records
    }
}
