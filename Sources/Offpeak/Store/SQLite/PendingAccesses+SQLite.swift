import Foundation
import GRDB

extension PendingAccesses {
    /// Writes `batch`: the entries' hits and last access, and the day counters.
    static func write(_ batch: Batch, to db: Database) throws {
        if !batch.touches.isEmpty {
            let touch = try db.cachedStatement(
                sql: """
                    UPDATE cache_entries SET hits = hits + ?, last_access_at = MAX(last_access_at, ?)
                    WHERE key = ?
                    """)
            for (key, access) in zip(batch.keys, batch.touches) {
                try touch.execute(arguments: [access.hits, access.lastAccessAt, key])
            }
        }
        let count = try db.cachedStatement(
            sql: """
                INSERT INTO cache_counters (day, kind, hits, misses) VALUES (?, ?, ?, ?)
                ON CONFLICT (day, kind) DO UPDATE
                SET hits = hits + excluded.hits, misses = misses + excluded.misses
                """)
        for (counter, tally) in batch.counters {
            try count.execute(arguments: [counter.day, counter.kind.rawValue, tally.hits, tally.misses])
        }
    }
}
