import Foundation

/// How a call ended, as far as the provider's limits are concerned.
enum CallOutcome: Sendable, Equatable {
    /// Answered, and the provider never pushed back on the way.
    case answered
    /// The provider said it is too busy or we are too fast (429, 529, 503), on any attempt: the
    /// number of calls in flight backs off.
    case throttled
    /// Anything else (a timeout, a refused request, an unreadable answer): nothing learned.
    case failed

    /// The outcome of a reply: throttled if any attempt was, else answered or failed.
    init(_ reply: CallReply) {
        if reply.throttledAttempts > 0 {
            self = .throttled
        } else if case .success = reply.answer {
            self = .answered
        } else {
            self = .failed
        }
    }

    /// An HTTP answer that means "slow down": a 429 rate limit (not a spent account, which no
    /// waiting fixes, nor a flex call refused for want of capacity, which says nothing of our
    /// pace), Anthropic's 529 overloaded, or a 503 (what OpenAI answers when overloaded).
    static func throttles(status: Int, errorCode: String?, message: String) -> Bool {
        switch status {
        case 429:
            return !RetryPolicy.isSpendLimit(errorCode: errorCode, message: message)
                && !FlexProcessing.isCapacityRefusal(errorCode: errorCode, message: message)
        case 503, 529: return true
        default: return false
        }
    }
}
