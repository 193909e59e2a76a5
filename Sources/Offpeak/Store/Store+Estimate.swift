import Foundation
import GRDB

/// What `offpeak estimate` reads: the store opened so that nothing can be written, and the answer
/// lengths the ledger has measured.
extension Store {
    /// The workspace's store opened read-only, whoever could write it, or nil when there is none:
    /// an estimate plans without sending or writing anything, so it neither creates a store nor
    /// migrates one, and leaves the file as it was.
    static func openReadOnlyIfPresent(_ workspace: Workspace) throws(OffpeakError) -> Store? {
        guard try StoreAccess.size(of: workspace.databaseURL) != nil else { return nil }
        return try Store(
            readOnlyAt: workspace.databaseURL,
            because: StoreAccess.ReadOnly(path: workspace.databaseURL.path, reason: "an estimate only reads"))
    }

    /// Output tokens per answered item, measured over the newest `calls` paid calls to `model`
    /// (of `job` only, when given): nil when the ledger has none.
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
