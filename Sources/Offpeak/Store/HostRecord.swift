import Foundation

/// A host the store has seen tick (`HostStore`), with what it holds now.
struct HostRecord: Sendable, Equatable {
    /// Its name (`HostName`).
    var name: String
    /// The offpeak its last tick ran.
    var version: String
    var firstSeenAt: Date
    var tickStartedAt: Date
    /// When its last tick ended, and how it exited; nil while it runs, or when it never ended
    /// (killed, or the store was out of reach at its end).
    var tickEndedAt: Date?
    var tickStatus: Int32?
    /// The power and network it read as its last tick started (`MachineConditions.summary`).
    var conditions: String
    /// Runs whose lease it holds, unexpired.
    var runsHeld = 0
    /// Its calls in flight: its budget reservations whose run's lease is live (a call is reserved
    /// only while a workspace or job budget is set).
    var callsInFlight = 0
}
