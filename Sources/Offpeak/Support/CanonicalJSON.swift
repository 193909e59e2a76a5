import Foundation

/// A value's JSON with sorted keys and unescaped slashes: the same value always gives the same
/// text, so it can be hashed (cache keys, spec hashes) and stored (request payloads, run specs).
enum CanonicalJSON {
    /// The value's canonical JSON; empty when it cannot be encoded (our types always can).
    static func text<T: Encodable>(_ value: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }
}
