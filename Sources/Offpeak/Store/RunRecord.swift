import Foundation

/// One run of a job: a row of `runs`.
public struct RunRecord: Codable, Sendable, Equatable {

    public var id: String
    public var job: String
    var kind: String
    var specHash: String
    public var state: RunState
    /// Why the run is in its state, in words a user reads ("provider unreachable: ...").
    public var reason: String?
    /// The budget that stopped it (`max_calls`, `max_dollars`, ...), if one did.
    var budgetStop: String?
    var provider: String
    var model: String
    var tier: String
    var downgraded: Bool
    public var forced: Bool
    public var itemsTotal: Int
    public var itemsDone: Int
    public var itemsFailed: Int
    var itemsCached: Int
    var createdAt: Date
    var startedAt: Date?
    var updatedAt: Date
    var finishedAt: Date?
    var deadlineAt: Date?
    /// The job spec the run was made from (canonical JSON), so `tick` can resume a run whose job
    /// has no spec file (`offpeak summarize`).
    var spec: String?
    /// How many calls in a row failed with `failureText`, and which requests they carried (at
    /// most a few ids, space-separated): see `FailureStreak`.
    var failureStreak = 0
    var failureText: String?
    var failureItems: String?
}

extension RunRecord {
    /// A new, idle run of `job`.
    static func new(job: JobSpec, provider: ProviderKind, model: String, itemsTotal: Int, at now: Date)
        -> RunRecord
    {
        RunRecord(
            id: newID(job: job.name, at: now), job: job.name, kind: job.kind.rawValue,
            specHash: SHA256.hex(CanonicalJSON.text(job)), state: .idle, reason: nil,
            budgetStop: nil,
            provider: provider.rawValue, model: model, tier: job.tier.rawValue, downgraded: false,
            forced: false,
            itemsTotal: itemsTotal, itemsDone: 0, itemsFailed: 0, itemsCached: 0, createdAt: now,
            startedAt: nil,
            updatedAt: now, finishedAt: nil, deadlineAt: job.deadline.map { now + $0 },
            spec: CanonicalJSON.text(job))
    }

    /// The spec the run was made from, if it kept one that still decodes.
    func storedSpec() -> JobSpec? {
        guard let spec else { return nil }
        return try? JSONDecoder().decode(JobSpec.self, from: Data(spec.utf8))
    }

    /// `<job>-<UTC yyyymmddThhmmss>-<8 hex>`: sortable, readable, unique per job (4 hex digits
    /// collided about once in a hundred runs when hosts ticking together made five runs of one job
    /// a second).
    static func newID(job: String, at date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss"
        // Always 8 digits, so run ids of one job have one width (tables line up the same way).
        let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 16).leftPadded(to: 8)
        return "\(job)-\(formatter.string(from: date))-\(suffix)"
    }

    /// Moves the run to `next`, refusing transitions `RunState` does not allow.
    mutating func move(to next: RunState, reason: String?, at now: Date) throws(InvalidTransition) {
        guard state == next || state.canMove(to: next) else {
            throw InvalidTransition(runID: id, from: state, to: next)
        }
        state = next
        self.reason = reason
        updatedAt = now
        if next == .running, startedAt == nil { startedAt = now }
        if next == .completed || next == .failed || next == .canceled { finishedAt = now }
    }
}
