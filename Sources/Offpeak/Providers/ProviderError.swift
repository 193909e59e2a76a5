import Foundation

/// Why a provider call failed, after any retries.
enum ProviderError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No connection could be made (refused, DNS, reset before an answer): the provider or the
    /// network is down. Work waits and resumes; it is not failed.
    case unreachable(String)
    /// The call took longer than the timeout.
    case timeout(seconds: Double)
    /// The connection closed before the whole answer arrived.
    case truncated(String)
    /// An HTTP error status, with the provider's own message when it sent one, and the URL that
    /// was called (nil where none is known): a wrong base URL shows in it.
    case http(status: Int, message: String, url: String? = nil)
    /// The answer arrived but is not what the API promises (not JSON, fields missing).
    case badResponse(String)
    /// A required key is not set.
    case missingKey(variable: String)
    /// The provider refused the key under a status that does not say so: Gemini answers a wrong key
    /// 400 `INVALID_ARGUMENT` with an `ErrorInfo` whose reason is `API_KEY_INVALID`
    /// (`keyRefusedReasons`). Like a 401, every later call would fail alike, so the run stops at the
    /// first.
    case keyRefused(status: Int, message: String, url: String?)

    /// The `ErrorInfo` reasons that say the key was refused, whatever the status.
    static let keyRefusedReasons: Set<String> = ["API_KEY_INVALID"]

    var description: String {
        switch self {
        case .unreachable(let why): return "provider unreachable: \(why)"
        case .timeout(let seconds): return "provider did not answer within \(Int(seconds)) s"
        case .truncated(let why): return "provider's answer was cut off: \(why)"
        case .http(let status, let message, let url):
            let hint = status == 404 ? url.flatMap(Self.baseURLHint).map { "; \($0)" } ?? "" : ""
            return "provider answered HTTP \(status)\(url.map { " to \($0)" } ?? ""): \(message)\(hint)"
        case .keyRefused(let status, let message, let url):
            return "provider refused the key (HTTP \(status)\(url.map { " to \($0)" } ?? "")): \(message)"
        case .badResponse(let why): return "provider's answer could not be read: \(why)"
        case .missingKey(let variable):
            return "\(variable) is not set; export it (a server on this machine or a proxy, such as "
                + "llama.cpp, vLLM, Ollama or LiteLLM, takes any value: \(variable)=none), or run against "
                + "the local simulator with --provider sim"
        }
    }

    /// The provider or the way to it is down for now; the work should wait, not fail.
    var isTransient: Bool {
        switch self {
        case .unreachable, .timeout, .truncated: return true
        case .http(let status, _, _): return status == 429 || status == 529 || (500...599).contains(status)
        case .badResponse, .missingKey, .keyRefused: return false
        }
    }

    /// The same error with every text a server or libcurl wrote passed through `redactor`.
    func redacted(by redactor: Redactor) -> ProviderError {
        switch self {
        case .unreachable(let why): return .unreachable(redactor.redact(why))
        case .truncated(let why): return .truncated(redactor.redact(why))
        case .http(let status, let message, let url):
            return .http(status: status, message: redactor.redact(message), url: url.map(redactor.redact))
        case .keyRefused(let status, let message, let url):
            return .keyRefused(
                status: status, message: redactor.redact(message), url: url.map(redactor.redact))
        case .badResponse(let why): return .badResponse(redactor.redact(why))
        case .timeout, .missingKey: return self
        }
    }

    /// The provider cannot answer now, whatever is asked, and says nothing of the request: it is down
    /// or unreachable (refused, reset, timed out, cut off past every retry), overloaded (5xx, 529),
    /// rate-limited past what a retry waits for, or out of money (OpenAI's `insufficient_quota`,
    /// Gemini's spent day, Anthropic's 400 "credit balance is too low"). A fallback may answer instead
    /// (`fallbacks:`). Never a mistake of the user's: a bad request, a refused key, a model the
    /// provider does not know.
    /// What waits (`isTransient`, but for a call cancelled by a stop), and Anthropic's spent credit.
    var callsForFallback: Bool {
        switch self {
        case .unreachable("cancelled"): return false
        case .http(400, let message, _): return Self.isSpentCredit(message)
        default: return isTransient
        }
    }

    /// Anthropic's answer to an account with no credit left: a 400 `invalid_request_error`, "Your
    /// credit balance is too low to access the Anthropic API".
    static func isSpentCredit(_ message: String) -> Bool {
        message.lowercased().contains("credit balance is too low")
    }

    /// The request itself, or the account, is wrong: every later call would fail the same way.
    var stopsTheRun: Bool {
        switch self {
        case .http(let status, _, _): return status == 401 || status == 403 || status == 404
        case .missingKey, .keyRefused: return true
        default: return false
        }
    }

    /// What a 404 from `url` most likely means about the base URL, when its path says.
    static func baseURLHint(_ url: String) -> String? {
        let path = URL(string: url)?.path ?? ""
        if path.contains("/v1/v1/") {
            return "the base URL ends in /v1 and the path adds another (an Anthropic base URL has no /v1)"
        }
        if path.hasSuffix("/chat/completions") && !path.contains("/v1/") {
            return "OpenAI-compatible servers (llama.cpp, vLLM, Ollama, LiteLLM) answer under /v1: "
                + "end the base URL with /v1"
        }
        return nil
    }
}
