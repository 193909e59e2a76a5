import Foundation
import PostgresNIO

/// Runs and requests read on PostgreSQL, each a range of an index (as on SQLite).
extension PostgresEngine {
    /// Pages through the answers by request id, so no more than a page is held at once.
    func forEachResult(runID: String, _ body: (ResultRecord) throws -> Void) throws(OffpeakError) {
        var after = ""
        while true {
            let rows = try store.query(
                """
                SELECT \(unescaped: Self.resultColumns) FROM results
                WHERE run_id = \(runID) AND request_id > \(after) ORDER BY request_id LIMIT \(Self.resultPage)
                """)
            for row in rows {
                let result = try self.result(row)
                do { try body(result) } catch let error as OffpeakError { throw error } catch {
                    throw OffpeakError(.ioError, "store error", cause: "\(error)")
                }
                after = result.requestId
            }
            if rows.count < Self.resultPage { return }
        }
    }

    static let resultPage = 500
}
