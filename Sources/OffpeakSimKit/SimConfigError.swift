/// A setting or control request the sim cannot accept, said so a person can fix it.
public struct SimConfigError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case unknownFault = "unknown_fault"
        case badFaultRate = "bad_fault_rate"
        case badOption = "bad_option"
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
