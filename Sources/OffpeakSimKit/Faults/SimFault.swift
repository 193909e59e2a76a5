import Foundation

/// A failure the sim can inject into one API call, named as tests and flags spell it.
public enum SimFault: String, CaseIterable, Sendable, Codable {
    /// 429 `rate_limit_error` with a `retry-after` header.
    case rateLimited = "429"
    /// 500 `api_error`.
    case serverError = "500"
    /// 529 `overloaded_error` (the OpenAI endpoint answers 503, as OpenAI does).
    case overloaded = "529"
    /// The account is out of money: OpenAI's 429 `insufficient_quota`, Anthropic's 400 "Your credit
    /// balance is too low", Gemini's 429 `RESOURCE_EXHAUSTED`. No retry helps.
    case quotaSpent = "quota"
    /// Waits `--timeout-delay` seconds, longer than a client's timeout, then answers normally.
    case timeout
    /// A 200 whose body stops half-way and whose connection is closed: a transfer error.
    case truncate
    /// A 502 HTML page from a "proxy", which no JSON parser accepts.
    case nonJSON = "nonjson"
    /// 400 `invalid_request_error`: this request is refused (the item's fault, not the provider's).
    case badRequest = "400"
    /// The echo faults answer their status with a message that repeats the request's headers
    /// (the API key included) and body, as some proxies and servers do:
    /// `{"error":{"message":"echo: <headers> body=<body>"}}` in the endpoint's error shape.
    case echoBadRequest = "echo400"
    /// 429 echoing the request, with the `retry-after` of `--retry-after`.
    case echoRateLimited = "echo429"
    case echoServerError = "echo500"
    /// 502 echoing the request, as a gateway in front of the API would.
    case echoBadGateway = "echo502"
    /// 529 echoing the request (503 on the OpenAI endpoint, as for `529`).
    case echoOverloaded = "echo529"

    /// Parses a fault name as given in `x-sim-fault`, `--fault-rate` or `POST /sim/faults`.
    /// - Throws: `SimConfigError.unknownFault` naming the accepted names.
    public init(name: String) throws {
        let key = name.trimmingCharacters(in: .whitespaces).lowercased()
        if key == "503" {
            self = .overloaded
            return
        }
        guard let fault = SimFault(rawValue: key) else {
            throw SimConfigError(.unknownFault, "unknown fault '\(name)'; expected one of \(Self.allNames)")
        }
        self = fault
    }

    /// The status an echo fault answers with; nil for the other faults.
    var echoStatus: Int? {
        switch self {
        case .echoBadRequest: return 400
        case .echoRateLimited: return 429
        case .echoServerError: return 500
        case .echoBadGateway: return 502
        case .echoOverloaded: return 529
        default: return nil
        }
    }

    /// Every fault name, comma-separated, for error messages and `--help`.
    public static var allNames: String { allCases.map(\.rawValue).joined(separator: ", ") }
}
