import Foundation
import Testing

@testable import Offpeak

/// A start time and the two moves every limiter test makes: admit a call that must go, and
/// finish one.
protocol LimiterTesting {
    var t0: Date { get }
}

extension LimiterTesting {
    /// Admits a call that must go.
    func go(
        _ limiter: CallLimiter, tokens: Int = 0, at now: Date,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> CallLimiter.CallTicket {
        let admission = try limiter.admit(estimatedTokens: tokens, now: now)
        guard case .go(let ticket) = admission else {
            Issue.record("expected .go, got \(admission)", sourceLocation: sourceLocation)
            throw CancellationError()
        }
        return ticket
    }

    func finish(
        _ limiter: CallLimiter, _ ticket: CallLimiter.CallTicket, _ outcome: CallOutcome = .answered,
        headers: RateLimitHeaders = .none, at now: Date
    ) {
        limiter.finished(ticket, outcome: outcome, headers: headers, now: now)
    }
}
