import Foundation
import GRDB

extension SQLiteStore {
    func forEachResult(runID: String, _ body: (ResultRecord) throws -> Void) throws(OffpeakError) {
        try read { db in
            let results = try ResultRecord.filter(Column("run_id") == runID).fetchCursor(db)
            while let result = try results.next() { try body(result) }
        }
    }
}
