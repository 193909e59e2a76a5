import Foundation

/// How many calls may be in flight right now: additive increase and multiplicative decrease, as
/// TCP finds the bandwidth of a path.
///
/// The cap starts at the configured most. (It once started at one call and grew with each answer,
/// so a wrong key or model failed one call rather than eight; but neither provider bills a call it
/// refuses, and the ramp cost a whole round of the run's longest call: a batched summary takes
/// seconds.) When the provider pushes back (429, 529, 503) it halves, down to 1; each run of `cap`
/// answers in a row then adds one back, up to the most. So a provider that is briefly overloaded costs a few slow seconds, and one that stays
/// overloaded gets one call at a time. Calls that were already in flight when the cap was cut were
/// sent at the old rate: their push-backs are the same overload and do not cut it again.
struct InFlightCap: Sendable, Equatable {
    /// The configured most.
    let most: Int
    /// Calls allowed in flight now, 1...most.
    private(set) var current: Int
    /// Answers since the cap last grew or was cut.
    private var answers = 0
    /// Calls numbered up to this had started before the last cut.
    private var cutAfter = -1

    init(most: Int) {
        self.most = max(1, most)
        self.current = self.most
    }

    /// An answer: one more slot after `current` answers in a row.
    mutating func answered() {
        guard current < most else { return }
        answers += 1
        if answers >= current {
            current += 1
            answers = 0
        }
    }

    /// The provider pushed back on call `ticket`; `lastStarted` is the newest call sent so far.
    mutating func throttled(ticket: Int, lastStarted: Int) {
        guard ticket > cutAfter else { return }
        current = max(1, current / 2)
        answers = 0
        cutAfter = lastStarted
    }
}
