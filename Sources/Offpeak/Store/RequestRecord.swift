import Foundation
import GRDB

/// One item's request within a run: a row of `requests`.
public struct RequestRecord: Codable, Sendable, Equatable {

    /// `inBatch`: placed in a provider batch (`BatchRecord`), so planning rounds, which read `pending`
    /// and `retrying`, leave it alone; unfinished, like pending, until its batch's result is booked.
    enum State: String, Codable, Sendable {
        case pending, done, failed, waiting, retrying
        case inBatch = "in_batch"
        /// Dropped by `offpeak cancel`, at the user's word.
        case canceled
        /// Not asked, as the job's spec says for such an item (`robots: skip`: a source of it that
        /// its site's robots.txt forbids); `error` says why.
        case skipped
    }

    /// How a request may use the cache: read and write it, `no-cache` (don't read, write), or
    /// `refresh` (read nothing, write anew). Both of the latter ask the provider again.
    public enum CachePolicy: String, Codable, Sendable, CaseIterable {
        case normal = "default"
        case noCache = "no-cache"
        case refresh
    }

    var id: String
    var runId: String
    var job: String
    /// The item's id within the job (inline id or input path).
    var itemId: String
    var position: Int
    /// Where it came from: the spec, `submit`, the spool, or a long item's step.
    var source: RequestSource
    var clientId: String?
    var tier: String
    /// The `CompletionRequest`, as JSON: exactly what is sent.
    var payload: String
    var cacheKey: String
    var state: State
    var attempts: Int
    var nextAttemptAt: Date?
    var error: String?
    var createdAt: Date
    var updatedAt: Date
    var cachePolicy: CachePolicy = .normal
    /// The research sources its prompt was built from (`SourceCitation.stored`); nil for none.
    var sources: String?
    /// A submitted request's own tags (`Tags.stored`), its calls counted under them besides its
    /// job's; nil for none. Requests with other tags never share a batched prompt.
    var tags: String?

    /// A new request id: `r`, the time in milliseconds (11 hex digits) and 52 random bits (13).
    ///
    /// Ids made one after another sort one after another, so the inserts of a submit or a new run
    /// land at the end of the requests' indexes on the id (and on the item id, which is the id
    /// when the client gave none) instead of all over them: 100,000 random ids rewrote most of
    /// those indexes' pages at every commit (`submit` commits every 2,000 lines). The random part
    /// keeps ids made in the same millisecond, by any process on any host, apart.
    static func newID(at now: Date = Date()) -> String {
        let milliseconds = UInt64(max(0, (now.timeIntervalSince1970 * 1000).rounded(.down)))
        return "r" + String(milliseconds, radix: 16).leftPadded(to: 11)
            + String(UInt64.random(in: 0..<(1 << 52)), radix: 16).leftPadded(to: 13)
    }

    /// Its columns, in the order the statements that read whole requests list them.
    static let columns = """
        id, run_id, job, item_id, position, source, client_id, tier, payload, cache_key, state, attempts,
        next_attempt_at, error, created_at, updated_at, cache_policy, sources, tags
        """

    /// A step of a long document (a chunk's summary, a reduce level): work, not an item.
    var isStep: Bool { source.isStep }

    func completionRequest() throws -> CompletionRequest {
        try JSONDecoder().decode(CompletionRequest.self, from: Data(payload.utf8))
    }
}

/// One item's answer: a row of `results`.
struct ResultRecord: StoredRecord, PersistableRecord, Equatable {
    static let databaseTableName = "results"

    var requestId: String
    var runId: String
    var text: String
    var finishReason: String
    var model: String
    var fromCache: Bool
    var ledgerId: Int64?
    var inputTokens: Int
    var outputTokens: Int
    var dollars: Double
    var createdAt: Date
    /// The web search results the answer cited (`SearchCitation.stored`); nil for none.
    var citations: String? = nil
}

extension String {
    /// The string with zeros in front, to `length` characters (ids of one width).
    func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
