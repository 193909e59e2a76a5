/// Any JSON value, for the parts of a request the sim reads loosely (a tool's schema, a
/// `response_format`) and for a tool call's input in an answer.
public enum SimJSON: Codable, Sendable, Equatable {
    case null, bool(Bool), number(Double), string(String)
    case array([SimJSON]), object([String: SimJSON])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([SimJSON].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: SimJSON].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let bool): try container.encode(bool)
        case .number(let number): try container.encode(number)
        case .string(let string): try container.encode(string)
        case .array(let array): try container.encode(array)
        case .object(let object): try container.encode(object)
        }
    }

    subscript(key: String) -> SimJSON? {
        guard case .object(let object) = self else { return nil }
        return object[key]
    }

    /// A whole number's value; nil for anything else.
    var int: Int? {
        guard case .number(let number) = self, number.rounded() == number, abs(number) < 1e15 else {
            return nil
        }
        return Int(number)
    }

    var string: String? {
        guard case .string(let text) = self else { return nil }
        return text
    }
}
