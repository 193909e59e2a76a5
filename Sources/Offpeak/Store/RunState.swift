/// Where a run is in its life (DESIGN.md, "How long work survives being stopped").
public enum RunState: String, Sendable, Codable, CaseIterable {
    /// Created, nothing sent yet.
    case idle
    /// A process holds its lease and is making calls.
    case running
    /// Deferred: its conditions do not hold; the queue says why.
    case waiting
    /// Stopped part-way (signal, window, budget, provider down); resumes on the next run or tick.
    case interrupted
    /// Every item answered.
    case completed
    /// Cannot go on without the user: items failed for good, or the provider refused the account.
    case failed
    /// Canceled by the user (`offpeak cancel`): its items not answered were dropped, at the user's word.
    case canceled

    /// The states a run may move to from this one. Finished runs stay finished.
    var successors: Set<RunState> {
        switch self {
        case .idle: return [.running, .waiting, .failed, .canceled]
        case .running: return [.completed, .failed, .interrupted, .waiting, .canceled]
        case .waiting: return [.running, .interrupted, .failed, .canceled]
        case .interrupted: return [.running, .waiting, .failed, .canceled]
        case .completed, .failed, .canceled: return []
        }
    }

    func canMove(to next: RunState) -> Bool { successors.contains(next) }

    /// A run in this state can be picked up again by `run` or `tick`.
    var isResumable: Bool {
        self == .idle || self == .waiting || self == .interrupted || self == .running
    }
}

/// A run asked to move where its state does not allow.
struct InvalidTransition: Error, CustomStringConvertible, Sendable {
    let runID: String
    let from: RunState
    let to: RunState
    var description: String { "run \(runID) cannot move from \(from.rawValue) to \(to.rawValue)" }
}
