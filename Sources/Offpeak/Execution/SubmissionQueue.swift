import Foundation

/// Puts submitted requests into a job's open run, where the next `run` or `tick` answers them
/// with the job's other pending requests (and batches them together where they fit).
public struct SubmissionQueue: Sendable {
    let store: Store
    let spec: JobSpec
    let config: WorkspaceConfig

    public init(store: Store, spec: JobSpec, config: WorkspaceConfig) {
        self.store = store
        self.spec = spec
        self.config = config
    }

    /// Commits `submissions` in one transaction.
    /// - Parameter source: `submit` or `spool`.
    /// - Returns: for each submission, its request id, or why it was refused.
    public func submit(_ submissions: [Submission], source: String) throws(OffpeakError) -> [Result<
        String, OffpeakError
    >] {
        let now = Date()
        let records = submissions.map { submission -> RequestRecord in
            let tier = submission.tier ?? spec.tier
            let planner = RequestPlanner(provider: config.provider, model: config.model(for: tier))
            let request = planner.request(spec, userMessage: submission.userMessage(for: spec))
            let id = RequestRecord.newID()
            var record = RequestRecord(
                id: id, runId: "", job: spec.name, itemId: submission.clientId ?? id, position: 0,
                source: source,
                clientId: submission.clientId, tier: tier.rawValue,
                payload: RequestPlanner.canonicalJSON(request),
                cacheKey: RequestPlanner.cacheKey(provider: config.provider, request: request),
                state: .pending,
                attempts: 0, nextAttemptAt: nil, error: nil, createdAt: now, updatedAt: now)
            record.cachePolicy = submission.cachePolicy
            return record
        }
        let run = RunRecord.new(
            job: spec, provider: config.provider, model: config.model(for: spec.tier), itemsTotal: 0, at: now)
        let outcomes = try store.enqueue(records, job: spec.name, newRun: run)
        return zip(records, outcomes).map { record, refusal in
            refusal.map { .failure(OffpeakError(.dataError, $0)) } ?? .success(record.id)
        }
    }
}
