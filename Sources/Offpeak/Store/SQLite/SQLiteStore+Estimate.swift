import Foundation
import GRDB

/// What `offpeak estimate` reads: the store opened so that nothing can be written, and the answer
/// lengths the ledger has measured.
extension SQLiteStore {
    /// The SQLite file read-only, or nil when there is none (`Store.openReadOnlyIfPresent`).
    static func openReadOnlyIfPresent(_ workspace: Workspace) throws(OffpeakError) -> SQLiteStore? {
        guard try StoreAccess.size(of: workspace.databaseURL) != nil else { return nil }
        return try SQLiteStore(
            readOnlyAt: workspace.databaseURL,
            because: StoreAccess.ReadOnly(path: workspace.databaseURL.path, reason: "an estimate only reads"))
    }

    func outputPerItem(model: String, job: String?, calls: Int = 500) throws(OffpeakError)
        -> (tokens: Double, items: Int)?
    {
        try read { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT SUM(output_tokens) AS output, SUM(items) AS items FROM (
                        SELECT output_tokens, items FROM ledger
                        WHERE model = ? AND (? IS NULL OR job = ?) AND cache_hit = 0 AND failed = 0
                            AND items > 0 AND output_tokens > 0
                        ORDER BY id DESC LIMIT ?)
                    """,
                arguments: [model, job, job, calls])
            guard let row, let items = row["items"] as Int?, items > 0, let output = row["output"] as Int?
            else { return nil }
            return (Double(output) / Double(items), items)
        }
    }
}
