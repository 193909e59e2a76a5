import Foundation

extension CallLimiter {
    /// Everything the limiter knows, changed only under its lock.
    struct State: Sendable {
        var cap: InFlightCap
        /// Offpeak's own limits, from `offpeak.yaml`.
        let requestsPerMinute: Int?
        let tokensPerMinute: Int?
        var window = MinuteWindow()
        var reported = ReportedLimits()
        /// No call starts before this (`retry-after`).
        var pausedUntil: Date?
        /// Ticket number -> estimated tokens, of the calls in flight.
        var inFlight: [Int: Int] = [:]
        var nextTicket = 0

        init(cap: InFlightCap, requestsPerMinute: Int?, tokensPerMinute: Int?) {
            self.cap = cap
            self.requestsPerMinute = requestsPerMinute
            self.tokensPerMinute = tokensPerMinute
        }

        /// The tighter of offpeak's limit and the provider's reported one.
        private static func tighter(_ own: Int?, _ reported: Int?) -> Int? {
            guard let own else { return reported }
            return min(own, reported ?? own)
        }

        mutating func admit(tokens: Int, now: Date) -> Admission {
            guard inFlight.count < cap.current else { return .waitForCall }
            window.forget(before: now)
            reported.expire(now: now)
            var latest: (until: Date, because: WaitReason)?
            func hold(_ until: Date?, _ reason: WaitReason) {
                guard let until, until > now, latest.map({ until > $0.until }) ?? true else { return }
                latest = (until, reason)
            }
            hold(pausedUntil, .retryAfter)
            if let limit = Self.tighter(requestsPerMinute, reported.requestsPerMinute) {
                hold(window.requestWait(limit: limit), .requestsPerMinute)
            }
            if let limit = Self.tighter(tokensPerMinute, reported.tokensPerMinute) {
                hold(window.tokenWait(limit: limit, needed: tokens), .tokensPerMinute)
            }
            if let wait = reported.wait(tokens: tokens) { hold(wait.until, wait.because) }
            if let latest { return .wait(until: latest.until, because: latest.because) }
            let ticket = CallTicket(number: nextTicket, estimatedTokens: tokens)
            nextTicket += 1
            inFlight[ticket.number] = tokens
            window.record(ticket: ticket.number, at: now, tokens: tokens)
            reported.take(tokens: tokens)
            return .go(ticket)
        }

        mutating func finish(
            _ ticket: CallTicket, outcome: CallOutcome, headers: RateLimitHeaders, now: Date, attempts: Int,
            usedTokens: Int?
        ) {
            guard inFlight.removeValue(forKey: ticket.number) != nil else { return }
            if let usedTokens { window.correct(ticket: ticket.number, tokens: max(0, usedTokens)) }
            for _ in 1..<max(1, attempts) {  // retries were requests too
                window.record(ticket: nextTicket, at: now, tokens: 0)
                nextTicket += 1
            }
            if headers != .none {
                let later = inFlight.filter { $0.key > ticket.number }
                reported.update(
                    headers, from: ticket.number, sentSince: (later.count, later.values.reduce(0, +)),
                    now: now)
            }
            if let retryAt = headers.retryAt, retryAt > now {
                pausedUntil = max(pausedUntil ?? retryAt, retryAt)
            }
            switch outcome {
            case .answered: cap.answered()
            case .throttled: cap.throttled(ticket: ticket.number, lastStarted: nextTicket - 1)
            case .failed: break
            }
        }

        mutating func withdraw(_ ticket: CallTicket) {
            guard let tokens = inFlight.removeValue(forKey: ticket.number) else { return }
            window.remove(ticket: ticket.number)
            reported.giveBack(ticket: ticket.number, tokens: tokens)
        }
    }
}
