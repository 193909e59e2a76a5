import Foundation
import GRDB

extension SQLiteStore {
    /// The job's newest unfinished run, in the transaction of `db` (`RunRules.resumableRun`).
    static func resumableRun(in db: Database, job: String) throws -> RunRecord? {
        try RunRules.resumableRun(SQLiteConnection(db: db), job: job)
    }
}
