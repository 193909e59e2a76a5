import Foundation

/// A clock set to `start` that goes on at the machine's pace (`--now`: a tick's, a run's), or the
/// machine's own when there is no `start`.
enum MovedClock {
    static func from(_ start: Date?) -> @Sendable () -> Date {
        guard let start else { return { Date() } }
        let ahead = start.timeIntervalSinceNow
        return { Date().addingTimeInterval(ahead) }
    }
}
