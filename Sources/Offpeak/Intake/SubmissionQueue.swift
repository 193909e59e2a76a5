import Foundation

/// Puts submitted requests into a job's open run, where the next `run` or `tick` answers them
/// with the job's other pending requests (and batches them together where they fit).
struct SubmissionQueue: Sendable {
    let store: Store
    let spec: JobSpec
    let config: WorkspaceConfig

    init(store: Store, spec: JobSpec, config: WorkspaceConfig) {
        self.store = store
        self.spec = spec
        self.config = config
    }

    /// Commits `submissions` in one transaction. An id given twice (in these submissions, or to the
    /// open run before) is refused at its own line; when nothing is added, no run is made.
    /// - Parameter source: `submit` or `spool`.
    /// - Returns: for each submission, its request id, or why it was refused.
    func submit(_ submissions: [Submission], source: RequestSource) throws(OffpeakError) -> [Result<
        String, OffpeakError
    >] {
        let now = Date()
        var outcomes: [Result<String, OffpeakError>?] = Array(repeating: nil, count: submissions.count)
        // By bytes, as the store compares ids: `é` as one code point and as two are two ids.
        var firstSeen: [[UInt8]: String] = [:]
        var records: [(index: Int, record: RequestRecord)] = []
        var templates: [JobSpec.Tier: RequestTemplate?] = [:]
        for (index, submission) in submissions.enumerated() {
            if let id = submission.clientId {
                if let earlier = firstSeen[Array(id.utf8)] {
                    outcomes[index] = .failure(refusal(submission, "was already given at \(earlier)"))
                    continue
                }
                firstSeen[Array(id.utf8)] = submission.location ?? "an earlier line"
            }
            records.append((index, record(for: submission, source: source, at: now, templates: &templates)))
        }
        let run = RunRecord.new(
            job: spec, provider: config.provider, model: config.model(for: spec.tier), itemsTotal: 0, at: now)
        let held = try store.submissions.enqueue(records.map(\.record), job: spec.name, newRun: run)
        for ((index, record), holder) in zip(records, held) {
            outcomes[index] =
                holder.map { .failure(refusal(submissions[index], "was already submitted to run \($0)")) }
                ?? .success(record.id)
        }
        return outcomes.map { $0 ?? .failure(OffpeakError(.software, "submission not committed")) }
    }

    private func refusal(_ submission: Submission, _ problem: String) -> OffpeakError {
        OffpeakError(
            .dataError, "id: \(Submission.quoted(submission.clientId ?? "")) \(problem)",
            location: submission.location)
    }

    /// The submission's request, made from its tier's template (the job's requests differ only in
    /// their message), or whole when the request cannot have one.
    private func record(
        for submission: Submission, source: RequestSource, at now: Date,
        templates: inout [JobSpec.Tier: RequestTemplate?]
    ) -> RequestRecord {
        let tier = submission.tier ?? spec.tier
        let message = submission.userMessage(for: spec)
        let template =
            templates[tier]
            ?? {
                let template = RequestTemplate(
                    provider: config.provider, request: request(tier: tier, message: ""))
                templates[tier] = template
                return template
            }()
        let encoded =
            template?.payloadAndKey(userMessage: message)
            ?? RequestPlanner.payloadAndKey(
                provider: config.provider, request: request(tier: tier, message: message))
        let id = RequestRecord.newID()
        var record = RequestRecord(
            id: id, runId: "", job: spec.name, itemId: submission.clientId ?? id, position: 0,
            source: source, clientId: submission.clientId, tier: tier.rawValue,
            payload: encoded.payload, cacheKey: encoded.cacheKey, state: .pending,
            attempts: 0, nextAttemptAt: nil, error: nil, createdAt: now, updatedAt: now)
        record.cachePolicy = submission.cachePolicy
        record.tags = submission.tags.isEmpty ? nil : Tags.stored(submission.tags)
        return record
    }

    private func request(tier: JobSpec.Tier, message: String) -> CompletionRequest {
        RequestPlanner(provider: config.provider, model: config.model(for: tier)).request(
            spec, userMessage: message)
    }
}
