import Foundation

/// How hard offpeak may press one provider: calls in flight at once, requests and tokens per
/// minute (`limits:` in `offpeak.yaml`).
///
/// Unset means "the default": as many calls in flight as suits where calls go, and no request or
/// token limit of offpeak's own; the provider's rate-limit headers still tighten both as they
/// arrive (`CallLimiter`).
struct ProviderLimits: Sendable, Equatable {
    /// Calls sent and not yet answered, at most; `nil` means the default for where calls go.
    var inFlight: Int?
    var requestsPerMinute: Int?
    /// Input and output tokens together, as the caller estimates them before a call.
    var tokensPerMinute: Int?

    init(inFlight: Int? = nil, requestsPerMinute: Int? = nil, tokensPerMinute: Int? = nil) {
        self.inFlight = inFlight
        self.requestsPerMinute = requestsPerMinute
        self.tokensPerMinute = tokensPerMinute
    }

    /// A remote API serves many calls at once; eight keeps a batch moving without inviting 429s.
    static let remoteInFlight = 8
    /// A llama.cpp or Ollama server on this machine often answers one request at a time, and
    /// calls queued behind it only time out.
    static let loopbackInFlight = 1

    /// Calls in flight toward `baseURL`: the configured number, else 8 for a remote API, else the
    /// provider's own for a server on loopback (`ProviderCapabilities.loopbackInFlight`: 1, or 8
    /// for offpeak-sim, which answers concurrently).
    /// Either way no more than the provider lets an account have (`ProviderCapabilities.mostInFlight`).
    func inFlight(for provider: ProviderKind, baseURL: String) -> Int {
        let chosen =
            inFlight
            ?? (Self.isLoopback(baseURL) ? provider.capabilities.loopbackInFlight : Self.remoteInFlight)
        return min(chosen, provider.capabilities.mostInFlight ?? chosen)
    }

    /// True when `baseURL` names this machine: `localhost`, `127.x.x.x` or `[::1]`.
    static func isLoopback(_ baseURL: String) -> Bool {
        guard let host = URLComponents(string: baseURL)?.host?.lowercased() else { return false }
        return host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }
}
