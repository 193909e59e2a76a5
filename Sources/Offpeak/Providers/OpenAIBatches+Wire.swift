import Foundation

/// The Batch and Files API shapes, spelled in camelCase; the coders convert to and from
/// snake_case.
extension OpenAIBatches {
    struct CreateRequest: Encodable {
        var inputFileId: String
        var endpoint: String
        var completionWindow: String
        var metadata: [String: String]
    }

    struct UploadedFile: Decodable {
        var id: String
    }

    struct WireBatch: Decodable {
        struct Counts: Decodable {
            var total: Int?
            var completed: Int?
            var failed: Int?
        }

        struct Errors: Decodable {
            struct Entry: Decodable {
                var code: String?
                var message: String?
                var line: Int?
            }
            var data: [Entry]?
        }

        var id: String
        var status: String
        var requestCounts: Counts?
        var createdAt: Double?
        var expiresAt: Double?
        var completedAt: Double?
        var failedAt: Double?
        var expiredAt: Double?
        var cancelledAt: Double?
        var outputFileId: String?
        var errorFileId: String?
        var metadata: [String: String]?
        var errors: Errors?

        /// OpenAI's states in both APIs' terms; `failed` says why from `errors`.
        func remote(redactor: Redactor) -> RemoteBatch {
            let phase: RemoteBatch.Phase
            switch status {
            case "cancelling": phase = .canceling
            case "completed", "expired", "cancelled", "failed": phase = .ended
            default: phase = .inProgress
            }
            let total = requestCounts?.total ?? 0
            let completed = requestCounts?.completed ?? 0
            let failed = requestCounts?.failed ?? 0
            let counts = RemoteBatch.Counts(
                processing: phase == .ended ? 0 : max(0, total - completed - failed), succeeded: completed,
                errored: failed)
            let ended = [completedAt, failedAt, expiredAt, cancelledAt].compactMap { $0 }.max()
            var failure: String?
            if status == "failed" {
                let messages = (errors?.data ?? []).map { entry in
                    (entry.line.map { "line \($0): " } ?? "")
                        + (entry.message ?? entry.code ?? "invalid input")
                }
                failure = messages.isEmpty ? "the batch failed" : messages.joined(separator: "; ")
            }
            return RemoteBatch(
                id: id, phase: phase, status: status, counts: counts, createdAt: Self.date(createdAt),
                expiresAt: Self.date(expiresAt), endedAt: Self.date(ended), label: metadata?["offpeak_batch"],
                outputFileID: outputFileId, errorFileID: errorFileId, failure: failure
            ).redacted(by: redactor)
        }

        private static func date(_ seconds: Double?) -> Date? {
            seconds.map { Date(timeIntervalSince1970: $0) }
        }
    }

    struct Page: Decodable {
        var data: [WireBatch]
        var hasMore: Bool
        var lastId: String?
    }
}
