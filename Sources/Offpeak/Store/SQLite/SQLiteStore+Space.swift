import Foundation
import GRDB

extension SQLiteStore {
    /// Gives free pages back (`Store.reclaimSpace`), then folds the log into the file so its size
    /// says what the store holds.
    func reclaimSpace(whole: Bool) throws(OffpeakError) -> (before: Int64, after: Int64) {
        let before: Int64
        do {
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            before = try Self.fileSize(url)
            try pool.writeWithoutTransaction { db in
                let incremental = try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") == 2
                if whole && !incremental {
                    try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
                    try db.execute(sql: "VACUUM")
                } else if incremental {
                    try db.execute(sql: "PRAGMA incremental_vacuum")
                }
                try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            }
        } catch { throw SQLiteStore.failure(error) }
        return (before, try Self.fileSize(url))
    }

    private static func fileSize(_ url: URL) throws(OffpeakError) -> Int64 {
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            return (attributes[.size] as? NSNumber)?.int64Value ?? 0
        } catch { throw OffpeakError(.ioError, "cannot read the size of \(url.path)", cause: "\(error)") }
    }
}
