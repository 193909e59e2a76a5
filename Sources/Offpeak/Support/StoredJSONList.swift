import Foundation

/// A list kept in one text column (a request's research sources, a result's search citations): JSON
/// with sorted keys, unescaped slashes and ISO 8601 whole-second UTC times; nil for an empty list,
/// and an empty list for nil or text that does not decode (written by another offpeak).
enum StoredJSONList {
    static func text<Element: Encodable>(_ elements: [Element]) -> String? {
        guard !elements.isEmpty, let data = try? encoder.encode(elements) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    static func decoded<Element: Decodable>(_ text: String?, as type: Element.Type = Element.self)
        -> [Element]
    {
        guard let text else { return [] }
        return (try? decoder.decode([Element].self, from: Data(text.utf8))) ?? []
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}
