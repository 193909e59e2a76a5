import Foundation

/// The rate-limit headers each API sends on every answer, rendered from a `RateLimitReport`.
///
/// Anthropic (docs.claude.com, "Rate limits", "Response headers"):
/// `anthropic-ratelimit-{requests,input-tokens,output-tokens,tokens}-{limit,remaining,reset}`;
/// token counts remaining are rounded to the nearest thousand; a reset is the RFC 3339 time when
/// that limit will be fully replenished; the `tokens` headers show the most restrictive limit in
/// effect, else input and output together. OpenAI (platform.openai.com, "Rate limits"):
/// `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`, a reset being the time until the limit
/// is back to its initial state, written as a Go duration (`1s`, `6m0s`, `20ms`). Only limits
/// that are set are reported. `retry-after` (whole seconds) is added by the 429 itself.
enum RateLimitHeaders {
    /// - Parameter wallNow: the wall-clock time of the answer, which the reset times count from.
    static func anthropic(_ report: RateLimitReport, at wallNow: Date) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = []
        func add(_ prefix: String, _ state: RateLimitState, roundToThousands: Bool) {
            let remaining =
                roundToThousands ? nearestThousand(state.remaining, limit: state.limit) : state.remaining
            let reset = Date(
                timeIntervalSince1970: (wallNow.timeIntervalSince1970 + state.secondsUntilFull).rounded(.up))
            fields.append(("anthropic-ratelimit-\(prefix)-limit", String(state.limit)))
            fields.append(("anthropic-ratelimit-\(prefix)-remaining", String(remaining)))
            fields.append(("anthropic-ratelimit-\(prefix)-reset", rfc3339(reset)))
        }
        let states = report.states
        if let requests = states[.requests] { add("requests", requests, roundToThousands: false) }
        if let input = states[.inputTokens] { add("input-tokens", input, roundToThousands: true) }
        if let output = states[.outputTokens] { add("output-tokens", output, roundToThousands: true) }
        if let tokens = states[.tokens] ?? combined([states[.inputTokens], states[.outputTokens]]) {
            add("tokens", tokens, roundToThousands: true)
        }
        return fields
    }

    static func openAI(_ report: RateLimitReport) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = []
        func add(_ suffix: String, _ state: RateLimitState) {
            fields.append(("x-ratelimit-limit-\(suffix)", String(state.limit)))
            fields.append(("x-ratelimit-remaining-\(suffix)", String(state.remaining)))
            fields.append(("x-ratelimit-reset-\(suffix)", goDuration(seconds: state.secondsUntilFull)))
        }
        let states = report.states
        if let requests = states[.requests] { add("requests", requests) }
        // OpenAI has one token limit; without --tpm the tighter of the input and output limits
        // stands in for it.
        let split: [RateLimitState] = [states[.inputTokens], states[.outputTokens]].compactMap { $0 }
        let tightest = split.min { $0.share < $1.share }
        if let tokens = states[.tokens] ?? tightest { add("tokens", tokens) }
        return fields
    }

    /// Input and output limits reported as one, as Anthropic's `tokens` headers do when no
    /// tighter limit applies: limits and remainders summed, full when both are.
    private static func combined(_ states: [RateLimitState?]) -> RateLimitState? {
        let present = states.compactMap { $0 }
        guard !present.isEmpty else { return nil }
        return RateLimitState(
            limit: present.reduce(0) { $0 + $1.limit }, remaining: present.reduce(0) { $0 + $1.remaining },
            secondsUntilFull: present.map(\.secondsUntilFull).max() ?? 0)
    }

    private static func nearestThousand(_ value: Int, limit: Int) -> Int {
        min(limit, Int((Double(value) / 1000).rounded()) * 1000)
    }

    /// RFC 3339 in UTC to the second, as Anthropic writes it: `2025-08-21T12:40:59Z`.
    static func rfc3339(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }

    /// A Go `time.Duration` string at millisecond precision, rounded up: `0s`, `20ms`, `1.2s`,
    /// `6m0s`, `1h2m3.5s`.
    static func goDuration(seconds: Double) -> String {
        // Less a millionth of a millisecond, so float noise (1.2 * 1000 = 1200.0000000000002)
        // does not round up to the next millisecond.
        let total = Int(max(0, seconds * 1000 - 1e-6).rounded(.up))
        if total == 0 { return "0s" }
        if total < 1000 { return "\(total)ms" }
        let hours = total / 3_600_000
        let minutes = total / 60_000 % 60
        let milliseconds = total % 60_000
        var secondsText = String(milliseconds / 1000)
        if milliseconds % 1000 != 0 {
            var fraction = String(milliseconds % 1000 + 1000).dropFirst()
            while fraction.last == "0" { fraction = fraction.dropLast() }
            secondsText += "." + fraction
        }
        if hours > 0 { return "\(hours)h\(minutes)m\(secondsText)s" }
        if minutes > 0 { return "\(minutes)m\(secondsText)s" }
        return secondsText + "s"
    }
}

extension RateLimitState {
    /// The part of the limit still free, in 0...1.
    fileprivate var share: Double { Double(remaining) / Double(max(1, limit)) }
}
