/// Why a provider call failed, after any retries.
enum ProviderError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No connection could be made (refused, DNS, reset before an answer): the provider or the
    /// network is down. Work waits and resumes; it is not failed.
    case unreachable(String)
    /// The call took longer than the timeout.
    case timeout(seconds: Double)
    /// The connection closed before the whole answer arrived.
    case truncated(String)
    /// An HTTP error status, with the provider's own message when it sent one.
    case http(status: Int, message: String)
    /// The answer arrived but is not what the API promises (not JSON, fields missing).
    case badResponse(String)
    /// A required key is not set.
    case missingKey(variable: String)

    var description: String {
        switch self {
        case .unreachable(let why): return "provider unreachable: \(why)"
        case .timeout(let seconds): return "provider did not answer within \(Int(seconds)) s"
        case .truncated(let why): return "provider's answer was cut off: \(why)"
        case .http(let status, let message): return "provider answered HTTP \(status): \(message)"
        case .badResponse(let why): return "provider's answer could not be read: \(why)"
        case .missingKey(let variable):
            return "\(variable) is not set; export it, or run against the local simulator with --provider sim"
        }
    }

    /// The provider or the way to it is down for now; the work should wait, not fail.
    var isTransient: Bool {
        switch self {
        case .unreachable, .timeout, .truncated: return true
        case .http(let status, _): return status == 429 || status == 529 || (500...599).contains(status)
        case .badResponse, .missingKey: return false
        }
    }

    /// The same error with every text a server or libcurl wrote passed through `redactor`.
    func redacted(by redactor: Redactor) -> ProviderError {
        switch self {
        case .unreachable(let why): return .unreachable(redactor.redact(why))
        case .truncated(let why): return .truncated(redactor.redact(why))
        case .http(let status, let message): return .http(status: status, message: redactor.redact(message))
        case .badResponse(let why): return .badResponse(redactor.redact(why))
        case .timeout, .missingKey: return self
        }
    }

    /// The request itself, or the account, is wrong: every later call would fail the same way.
    var stopsTheRun: Bool {
        switch self {
        case .http(let status, _): return status == 401 || status == 403 || status == 404
        case .missingKey: return true
        default: return false
        }
    }
}
