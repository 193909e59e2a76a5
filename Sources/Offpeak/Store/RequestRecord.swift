import Foundation
import GRDB

/// One item's request within a run: a row of `requests`.
public struct RequestRecord: StoredRecord, PersistableRecord, Equatable {
    public static let databaseTableName = "requests"

    public enum State: String, Codable, Sendable {
        case pending, done, failed, waiting, retrying
    }

    /// How a request may use the cache: read and write it, `no-cache` (don't read, write), or
    /// `refresh` (read nothing, write anew). Both of the latter ask the provider again.
    public enum CachePolicy: String, Codable, Sendable, CaseIterable {
        case normal = "default"
        case noCache = "no-cache"
        case refresh
    }

    public var id: String
    public var runId: String
    public var job: String
    /// The item's id within the job (inline id or input path).
    public var itemId: String
    public var position: Int
    /// Where it came from: the spec, `submit`, the spool, or a long item's step.
    public var source: RequestSource
    public var clientId: String?
    public var tier: String
    /// The `CompletionRequest`, as JSON: exactly what is sent.
    public var payload: String
    public var cacheKey: String
    public var state: State
    public var attempts: Int
    public var nextAttemptAt: Date?
    public var error: String?
    public var createdAt: Date
    public var updatedAt: Date
    public var cachePolicy: CachePolicy = .normal

    /// A new request id: `r` and 16 random hex digits, short enough to type into `offpeak result`.
    static func newID() -> String {
        "r" + String(UInt64.random(in: 0...UInt64.max), radix: 16).leftPadded(to: 16)
    }

    /// A step of a long document (a chunk's summary, a reduce level): work, not an item.
    var isStep: Bool { source.isStep }

    func completionRequest() throws -> CompletionRequest {
        try JSONDecoder().decode(CompletionRequest.self, from: Data(payload.utf8))
    }
}

/// One item's answer: a row of `results`.
public struct ResultRecord: StoredRecord, PersistableRecord, Equatable {
    public static let databaseTableName = "results"

    public var requestId: String
    public var runId: String
    public var text: String
    public var finishReason: String
    public var model: String
    public var fromCache: Bool
    public var ledgerId: Int64?
    public var inputTokens: Int
    public var outputTokens: Int
    public var dollars: Double
    public var createdAt: Date
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
