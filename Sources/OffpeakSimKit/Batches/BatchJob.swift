import Foundation

/// Which provider's batch API a batch came through; it decides the answer shape and the ids.
enum BatchAPI: String, Sendable {
    case anthropic
    case openAI = "openai"
    case gemini
    case mistral
}

/// One request of a provider batch: the caller's `custom_id` and the body it would have sent live.
struct BatchRequest: Sendable {
    var customID: String
    var body: Data
}

/// What became of one request when its batch ended.
enum BatchOutcome: Sendable, Equatable {
    /// The answer body the live endpoint would have sent, as JSON.
    case succeeded(Data)
    /// The error the live endpoint would have answered with.
    case errored(SimAPIError)
    case expired
    case canceled
}

/// A provider batch in the sim: its requests, and once it ended, each request's outcome in the
/// (shuffled) order its results are served.
struct BatchJob: Sendable {
    enum Phase: Sendable, Equatable {
        case inProgress
        /// Canceled by the caller; the requests not yet done end as canceled.
        case canceling
        case ended
        /// OpenAI only: the input file was refused (`errors` says why); nothing ran.
        case failed
    }

    var id: String
    var api: BatchAPI
    var createdAt: Date
    var requests: [BatchRequest]
    var phase = Phase.inProgress
    var cancelInitiatedAt: Date?
    var endedAt: Date?
    /// In serving order, not submission order.
    var results: [(customID: String, outcome: BatchOutcome)] = []
    /// Why an OpenAI batch failed validation.
    var failure: String?
    /// OpenAI: the input file, endpoint, window and metadata echoed back.
    var inputFileID: String?
    /// The live endpoint an OpenAI batch's requests stand for: chat completions, or the Responses
    /// API (`/v1/responses`).
    var endpoint = OpenAIBatchRoutes.endpoint
    var metadata: [String: String]?
    /// Gemini: the model of every request (named in the create call's path) and the batch's name.
    var model: String?
    var displayName: String?
    var outputFileID: String?
    var errorFileID: String?

    /// The counts `request_counts` reports.
    var counts: (processing: Int, succeeded: Int, errored: Int, canceled: Int, expired: Int) {
        guard phase == .ended else { return (requests.count, 0, 0, 0, 0) }
        var counts = (processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0)
        for (_, outcome) in results {
            switch outcome {
            case .succeeded: counts.succeeded += 1
            case .errored: counts.errored += 1
            case .canceled: counts.canceled += 1
            case .expired: counts.expired += 1
            }
        }
        return counts
    }
}
