import Foundation

/// Reading what providers send back, shared by both API shapes: JSON answers with failures that
/// name the missing field, provider error bodies, and usage estimates for servers that send none.
extension ProviderTransport {
    /// The message and machine-readable code of an error body, the message redacted.
    ///
    /// Understands `{"error": {"message", "type", "code"}}` (Anthropic and OpenAI),
    /// `{"error": {"code": 429, "message", "status", "details"}}` (Gemini: the code is `status`,
    /// a `RetryInfo` detail's `retryDelay` says when to come back, and an `ErrorInfo`'s `reason` why), `{"error": "..."}` and
    /// `{"message": "..."}` (some local servers); anything else is shown as its first 200
    /// characters on one line.
    static func errorDetails(in body: Data, redactor: Redactor) -> ErrorDetails {
        if let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] {
            if let error = object["error"] as? [String: Any], let message = error["message"] as? String {
                let code =
                    (error["code"] as? String) ?? (error["status"] as? String)
                    ?? (error["code"] as? Int).map(String.init) ?? (error["type"] as? String)
                let details = error["details"] as? [[String: Any]] ?? []
                let delay = details.lazy.compactMap { $0["retryDelay"] as? String }.first
                return ErrorDetails(
                    message: redactor.redact(message), code: code,
                    retryAfter: delay.map { $0.hasSuffix("s") ? String($0.dropLast()) : $0 },
                    reasons: details.compactMap { $0["reason"] as? String })
            }
            if let message = (object["error"] as? String) ?? (object["message"] as? String) {
                return ErrorDetails(message: redactor.redact(message))
            }
        }
        return ErrorDetails(message: snippet(of: body, redactor: redactor))
    }

    /// What an error body says.
    struct ErrorDetails {
        var message: String
        /// The machine-readable code or type, when the body has one.
        var code: String?
        /// Seconds to wait before trying again, as the body says (Gemini's `RetryInfo`, `"30s"`
        /// read as `30`), for a server that says it there rather than in `retry-after`.
        var retryAfter: String?
        /// The reasons of its `ErrorInfo` details (Gemini: `API_KEY_INVALID`).
        var reasons: [String] = []

        /// The error a response with this body and `status` is.
        func error(status: Int, url: String) -> ProviderError {
            reasons.contains(where: ProviderError.keyRefusedReasons.contains)
                ? .keyRefused(status: status, message: message, url: url)
                : .http(status: status, message: message, url: url)
        }
    }

    /// The start of a body on one line, for messages about bodies we could not understand.
    /// Redacted before it is cut, so a key at the cut cannot leave its first half behind.
    static func snippet(of body: Data, redactor: Redactor, limit: Int = 200) -> String {
        let text = redactor.redact(String(decoding: body.prefix(64 * 1024), as: UTF8.self))
        let line = text.split(whereSeparator: { $0.isWhitespace || $0.isNewline }).joined(separator: " ")
        return line.isEmpty ? "empty body" : String(line.prefix(limit))
    }

    /// Decodes a JSON answer; a failure names what is missing or wrong, by its JSON path.
    static func decode<Value: Decodable>(_ type: Value.Type, from body: Data, redactor: Redactor)
        throws(ProviderError) -> Value
    {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        do {
            return try decoder.decode(type, from: body)
        } catch let error as DecodingError {
            throw .badResponse(describe(error, body: body, redactor: redactor))
        } catch {
            throw .badResponse(redactor.redact("\(error)"))
        }
    }

    /// JSON for a request body, with stable key order and snake_case keys.
    static func encode(_ value: some Encodable) throws(ProviderError) -> Data {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(value)
        } catch {
            throw .badResponse("request could not be encoded: \(error)")
        }
    }

    /// Our estimate for an answer that came without usage (`TokenEstimator`'s rule, as the sim bills).
    static func estimatedUsage(for request: CompletionRequest, text: String) -> Usage {
        Usage(input: TokenEstimator.inputTokens(request), output: TokenEstimator.tokens(text))
    }

    private static func describe(_ error: DecodingError, body: Data, redactor: Redactor) -> String {
        func path(_ keys: [any CodingKey], _ last: (any CodingKey)? = nil) -> String {
            let all = keys + (last.map { [$0] } ?? [])
            let text = all.map { key in key.intValue.map { "[\($0)]" } ?? ".\(snakeCase(key.stringValue))" }
                .joined()
            return text.hasPrefix(".") ? String(text.dropFirst()) : text
        }
        switch error {
        case .keyNotFound(let key, let context): return "answer lacks `\(path(context.codingPath, key))`"
        case .valueNotFound(_, let context): return "answer has null `\(path(context.codingPath))`"
        case .typeMismatch(_, let context):
            return "answer has the wrong type at `\(path(context.codingPath))`"
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            return "answer is not JSON: \(snippet(of: body, redactor: redactor))"
        case .dataCorrupted(let context): return "answer has a bad value at `\(path(context.codingPath))`"
        @unknown default: return "answer could not be read"
        }
    }

    /// Turns a decoded key back into the wire's spelling for messages (`finishReason` -> `finish_reason`).
    private static func snakeCase(_ key: String) -> String {
        key.reduce(into: "") { text, character in
            if character.isUppercase {
                text += "_" + character.lowercased()
            } else {
                text.append(character)
            }
        }
    }
}
