import Foundation

extension Store {
    /// What canceling a run did.
    public struct Cancellation: Sendable, Equatable, Codable {
        /// Requests dropped (pending, retrying, waiting).
        public var dropped = 0
        /// Items still in provider batches: the run ends once they are collected.
        public var inBatch = 0
        public var state: RunState
    }
}
