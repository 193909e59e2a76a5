import Foundation

/// A provider's batch API (Anthropic Message Batches, OpenAI Batch): calls answered within 24
/// hours at half price. Every method is one exchange (or a few: an upload then a create) over the
/// provider's transport, blocking, thread-safe; what the server sends back leaves redacted.
///
/// Results come in any order and are matched by `customID` only, never by position.
protocol BatchAPI: Sendable {
    /// How much one batch may hold.
    var limits: BatchLimits { get }

    /// Creates one batch of `requests`, each under its custom id (unique in the batch, within
    /// `^[a-zA-Z0-9_-]{1,64}$`). `label` (offpeak's own batch id) is kept where the API keeps one
    /// (OpenAI: `metadata.offpeak_batch`), so a batch created but never recorded can be found again.
    /// The caller guarantees one model per batch (OpenAI's rule) and `limits`.
    func create(label: String, requests: [BatchRequest]) throws(ProviderError) -> RemoteBatch

    func retrieve(_ id: String) throws(ProviderError) -> RemoteBatch

    /// Asks the provider to cancel; the batch ends `canceling`, then `ended` with what it finished.
    func cancel(_ id: String) throws(ProviderError) -> RemoteBatch

    /// Looks for the batch a create call made for `search.label` whose answer offpeak never stored
    /// (the process was killed in between): OpenAI by its metadata; Anthropic, which keeps no
    /// label, among the batches created since the batch was prepared, by the custom ids of their
    /// results (so only once such a candidate has ended).
    func find(_ search: BatchSearch) throws(ProviderError) -> BatchSearch.Finding

    /// Every result of an ended batch, as the provider wrote them. `requests` holds what was sent
    /// under each custom id, for reading answers whose usage is missing.
    func results(of batch: RemoteBatch, requests: [String: CompletionRequest]) throws(ProviderError)
        -> [BatchResult]
}

/// One request of a batch.
struct BatchRequest: Sendable, Equatable {
    var customID: String
    var request: CompletionRequest
}

/// What one batch may hold, as each API documents it.
struct BatchLimits: Sendable, Equatable {
    var maxRequests: Int
    /// Of the request body (Anthropic) or the uploaded JSONL file (OpenAI).
    var maxBytes: Int

    /// Message Batches: 100,000 requests or 256 MB.
    static let anthropic = BatchLimits(maxRequests: 100_000, maxBytes: 256 * 1024 * 1024)
    /// OpenAI Batch: 50,000 requests, a 200 MB file.
    static let openAI = BatchLimits(maxRequests: 50_000, maxBytes: 200 * 1024 * 1024)
}

/// A batch as the provider last described it.
struct RemoteBatch: Sendable, Equatable {
    /// Where the batch is, in both APIs' terms.
    enum Phase: String, Sendable {
        /// Validating, queued or running (OpenAI `validating`, `in_progress`, `finalizing`;
        /// Anthropic `in_progress`).
        case inProgress = "in_progress"
        /// Cancel asked, not finished (both APIs' `canceling`/`cancelling`).
        case canceling
        /// Nothing more will change: results (if any) can be read. OpenAI `completed`, `expired`,
        /// `cancelled`, `failed`; Anthropic `ended`.
        case ended
    }

    struct Counts: Sendable, Equatable, Codable {
        var processing = 0
        var succeeded = 0
        var errored = 0
        var canceled = 0
        var expired = 0
    }

    /// The provider's id (`msgbatch_...`, `batch_...`).
    var id: String
    var phase: Phase
    /// The provider's own word for the state (`in_progress`, `ended`, `completed`, `expired`, ...).
    var status: String
    var counts = Counts()
    var createdAt: Date?
    var expiresAt: Date?
    var endedAt: Date?
    /// `metadata.offpeak_batch` (OpenAI); nil where the API keeps no label.
    var label: String?
    /// Anthropic's `results_url`.
    var resultsURL: String?
    /// OpenAI's output and error files.
    var outputFileID: String?
    var errorFileID: String?
    /// Why the provider refused the whole batch (OpenAI `failed` with `errors`), redacted.
    var failure: String?
}

/// What the provider reported for one request of a batch.
struct BatchResult: Sendable, Equatable {
    enum Outcome: Sendable, Equatable {
        case succeeded(CompletionResponse)
        /// Refused as invalid (a 400-class error): the same request would be refused again.
        case invalid(String)
        /// Failed another way (a server error, overload): may go again.
        case errored(String)
        case expired
        case canceled
    }

    var customID: String
    var outcome: Outcome
}

/// What `BatchAPI.find` looks for.
struct BatchSearch: Sendable, Equatable {
    /// offpeak's batch id, as `create` was given it.
    var label: String
    /// Every custom id of the batch starts with this (`<label>_`).
    var customIDPrefix: String
    var requestCount: Int
    /// When the batch was committed, just before the create call: the batch cannot be older
    /// (less a few minutes of clock skew).
    var preparedAt: Date
    /// The latest the create call could have been answered (`preparedAt` plus its timeout).
    var createdBy: Date
    /// Provider ids offpeak already holds for other batches: never a match.
    var known: Set<String>

    enum Finding: Sendable, Equatable {
        case found(RemoteBatch)
        /// No batch was created for it: its requests can go again.
        case absent
        /// Candidates exist whose results cannot be read yet (Anthropic): ask again later.
        case undecided(String)
    }
}

extension CompletionProvider {
    /// The provider's batch API, if it has one.
    var batches: (any BatchAPI)? { nil }
}
