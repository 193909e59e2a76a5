import Foundation

/// `offpeak cache purge`, decided once for both engines (`SQLEngine`), under the cache's lock.
extension AnswerCacheStore where Self: SQLEngine {
    func purgeCache(_ scope: PurgeScope, now: Date) throws(OffpeakError) -> CachePurge {
        try writing { sql throws(OffpeakError) -> CachePurge in
            try sql.lock(.cache)
            switch scope {
            case .expired:
                let removed = try sql.execute(
                    "DELETE FROM cache_entries WHERE expires_at <= \(now) AND NOT reuse")
                var kept: [String: Int] = [:]
                for row in try sql.rows(
                    """
                    SELECT kind, COUNT(*) AS entries FROM cache_entries WHERE expires_at <= \(now) AND reuse
                    GROUP BY kind
                    """)
                {
                    kept[try row("kind")] = try row("entries")
                }
                return CachePurge(
                    removed: removed, keptForReuse: kept[CacheKind.answer.rawValue] ?? 0,
                    keptSources: kept[CacheKind.source.rawValue] ?? 0)
            case .job(let job):
                return CachePurge(removed: try sql.execute("DELETE FROM cache_entries WHERE job = \(job)"))
            case .all:
                return CachePurge(removed: try sql.execute("DELETE FROM cache_entries"))
            }
        }
    }
}
