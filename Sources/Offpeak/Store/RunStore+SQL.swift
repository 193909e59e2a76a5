import Foundation

/// The runs' reads that both engines make alike, written once (`SQLEngine`).
///
/// States are written into the statement as literals (`SQLStates`), never bound: only then may
/// either engine read a partial index whose condition names the state (`requests_retrying`).
extension RunStore where Self: SQLEngine {
    func retryingRequests() throws(OffpeakError) -> [RequestRecord] {
        try reading { sql throws(OffpeakError) -> [RequestRecord] in
            try sql.requests(
                """
                SELECT \(unescaped: RequestRecord.columns) FROM requests
                WHERE state = \(unescaped: SQLStates.request(.retrying)) ORDER BY next_attempt_at NULLS FIRST
                """)
        }
    }
}
