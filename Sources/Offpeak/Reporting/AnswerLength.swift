import Foundation

/// How long an answer the estimate expects: what the ledger measured for the job on its model,
/// else for the model, else a fixed share of `max_tokens` (nothing better is known before the
/// first answer). Never more than a request may write.
struct AnswerLength: Sendable, Equatable {
    /// Where the length comes from, as the estimate says it.
    enum Basis: String, Sendable {
        /// The job's own answers on this model (the ledger's newest paid calls).
        case job
        /// Any job's answers on this model.
        case model
        /// `maxTokensShare` of `max_tokens`: no answer of the model is measured yet.
        case maxTokens = "max_tokens"
    }

    /// The share of `max_tokens` an answer is taken to fill before any is measured: half, so a
    /// job whose answers run to the limit costs at most a third more than estimated on output.
    static let maxTokensShare = 0.5

    /// Tokens per answered item; nil: `maxTokensShare` of each request's `max_tokens`.
    var measured: Double?
    var basis: Basis
    /// How many answered items the measure is over (0 for `maxTokens`).
    var items: Int

    /// The measure for `job` on `model` from `store` (none without a store).
    static func measure(store: Store?, job: String, model: String) throws(OffpeakError) -> AnswerLength {
        if let found = try store?.ledger.outputPerItem(model: model, job: job) {
            return AnswerLength(measured: found.tokens, basis: .job, items: found.items)
        }
        if let found = try store?.ledger.outputPerItem(model: model, job: nil) {
            return AnswerLength(measured: found.tokens, basis: .model, items: found.items)
        }
        return AnswerLength(measured: nil, basis: .maxTokens, items: 0)
    }

    /// The expected output of one item's request allowed `maxTokens`.
    func tokens(maxTokens: Int) -> Int {
        let expected = measured ?? Double(maxTokens) * Self.maxTokensShare
        return min(maxTokens, max(1, Int(expected.rounded())))
    }

    /// The expected output of a planned call whose items may write `itemMaxTokens` each: each
    /// item's answer, plus the batch format's key and quotes per item when batched; never more
    /// than the call allows. A measured length already holds the format's share when it was
    /// measured on batched prompts.
    func tokens(of call: PlannedCall, itemMaxTokens: [Int]) -> Int {
        let answers = itemMaxTokens.reduce(0) { $0 + tokens(maxTokens: $1) }
        let format =
            call.isBatched && measured == nil
            ? Int(BatchPlanner.itemOutputOverhead) * call.requests.count : 0
        return min(call.request.maxTokens, answers + format)
    }

    /// The sentence the estimate prints about it.
    func sentence(model: String, job: String, maxTokens: Int) -> String {
        let each = tokens(maxTokens: maxTokens)
        switch basis {
        case .job:
            return "about \(Plural.count(each, "token")) an answer, as measured on "
                + "\(Plural.count(items, "answered item")) of job \(job)"
        case .model:
            return "about \(Plural.count(each, "token")) an answer, as measured on "
                + "\(Plural.count(items, "answered item")) of \(model)"
        case .maxTokens:
            return "about \(Plural.count(each, "token")) an answer: half of max_tokens (\(maxTokens)), "
                + "as no answer of \(model) is measured in this workspace yet"
        }
    }
}
