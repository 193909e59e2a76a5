import Foundation
import Hummingbird

/// Reads request bodies and writes answers as JSON, turning decoding failures into messages that
/// name the field at fault (`messages.0.content: field required`), as the real APIs do.
enum JSONBody {
    /// - Throws: `SimAPIError` (400 `invalid_request_error`) describing what is wrong.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        guard !data.isEmpty else {
            throw SimAPIError(.invalidRequest, "request body is empty; expected a JSON object")
        }
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch let error as DecodingError {
            throw SimAPIError(.invalidRequest, describe(error))
        } catch {
            throw SimAPIError(.invalidRequest, "invalid JSON body: \(error)")
        }
    }

    static func encode(_ value: some Encodable) -> ByteBuffer {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return ByteBuffer(bytes: try encoder.encode(value))
        } catch {
            // The sim's own answer types always encode; say so rather than crash if one did not.
            return ByteBuffer(string: #"{"error":{"type":"api_error","message":"could not encode answer"}}"#)
        }
    }

    static func describe(_ error: DecodingError) -> String {
        switch error {
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])): field required"
        case .typeMismatch(let type, let context):
            let detail =
                context.debugDescription.hasPrefix("expected")
                ? context.debugDescription : "expected \(name(of: type))"
            return "\(path(context.codingPath)): \(detail)"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)): expected \(name(of: type)), got null"
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            let detail = context.underlyingError.map { "\($0)" } ?? context.debugDescription
            return "request body is not valid JSON: \(detail)"
        case .dataCorrupted(let context):
            return "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "invalid request body: \(error)"
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        guard !keys.isEmpty else { return "body" }
        return keys.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
    }

    private static func name(of type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Int.Type: return "an integer"
        case is Double.Type: return "a number"
        case is Bool.Type: return "a boolean"
        default:
            let text = String(describing: type)
            if text.hasPrefix("Array") { return "an array" }
            if text.hasPrefix("Dictionary") { return "an object" }
            return "an object"
        }
    }
}
