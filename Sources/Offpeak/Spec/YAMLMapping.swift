import Foundation
import Yams

/// One YAML mapping whose keys have been checked, read field by field with typed accessors.
///
/// A field written as `null` (or with no value) counts as absent, so `system:` on its own line
/// means "no system prompt" rather than a type error. Each accessor returns `nil` for an absent
/// field and throws a located error for a present but wrong one.
struct YAMLMapping {
    let reader: YAMLNodeReader
    /// The mapping itself, where "required" errors point.
    let node: Node
    /// This mapping's field path (`""` for the document root, `budget` for a nested one).
    let field: String
    let entries: [String: (key: Node, value: Node)]

    /// `parent.name`, or `name` at the root.
    static func join(_ parent: String, _ name: String) -> String {
        parent.isEmpty ? name : "\(parent).\(name)"
    }

    /// The full field path of one key, for messages.
    func path(_ key: String) -> String { Self.join(field, key) }

    /// The value node of `key`, or `nil` when absent or null.
    func value(_ key: String) -> Node? {
        guard let value = entries[key]?.value else { return nil }
        if case .scalar(let scalar) = value, NSNull.construct(from: scalar) != nil { return nil }
        return value
    }

    /// The key node of `key` if it is written at all, else the mapping: where an error about it points.
    func location(_ key: String) -> Node {
        entries[key]?.key ?? node
    }

    /// An error for a field that must be given.
    func missing(_ key: String, _ expected: String) -> OffpeakError {
        reader.error(path(key), "required: \(expected)", at: location(key))
    }

    func string(_ key: String) throws(OffpeakError) -> String? {
        guard let node = value(key) else { return nil }
        return try reader.string(node, at: path(key))
    }

    /// A string with something in it besides spaces.
    func nonEmptyString(_ key: String) throws(OffpeakError) -> String? {
        guard let text = try string(key) else { return nil }
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw reader.error(path(key), "expected a non-empty string", at: value(key))
        }
        return text
    }

    /// An `http://` or `https://` URL with a host (a base URL): a typo here would otherwise surface
    /// as a connection error on the first call.
    func httpURL(_ key: String) throws(OffpeakError) -> String? {
        guard let text = try string(key) else { return nil }
        let url = URL(string: text)
        guard let scheme = url?.scheme?.lowercased(), ["http", "https"].contains(scheme),
            url?.host?.isEmpty == false
        else {
            throw reader.error(
                path(key), "expected an http:// or https:// URL, got '\(text)'", at: value(key))
        }
        return text
    }

    func wholeNumber(_ key: String, in range: ClosedRange<Int>) throws(OffpeakError) -> Int? {
        guard let node = value(key) else { return nil }
        return try reader.wholeNumber(node, at: path(key), in: range)
    }

    func number(
        _ key: String, in range: ClosedRange<Double>, exclusiveLower: Bool = false
    ) throws(OffpeakError) -> Double? {
        guard let node = value(key) else { return nil }
        return try reader.number(node, at: path(key), in: range, exclusiveLower: exclusiveLower)
    }

    func share(_ key: String, belowOne: Bool = false) throws(OffpeakError) -> Double? {
        guard let node = value(key) else { return nil }
        return try reader.share(node, at: path(key), belowOne: belowOne)
    }

    func bool(_ key: String) throws(OffpeakError) -> Bool? {
        guard let node = value(key) else { return nil }
        return try reader.bool(node, at: path(key))
    }

    func choice<Value: RawRepresentable & CaseIterable>(
        _ key: String, as type: Value.Type
    ) throws(OffpeakError) -> Value? where Value.RawValue == String {
        guard let node = value(key) else { return nil }
        return try reader.choice(node, at: path(key), as: type)
    }

    func duration(
        _ key: String, allowZero: Bool = false, atMost most: TimeInterval
    ) throws(OffpeakError) -> TimeInterval? {
        guard let node = value(key) else { return nil }
        return try reader.duration(node, at: path(key), allowZero: allowZero, atMost: most)
    }

    func byteSize(_ key: String, atMost most: Int) throws(OffpeakError) -> Int? {
        guard let node = value(key) else { return nil }
        return try reader.byteSize(node, at: path(key), atMost: most)
    }

    func strings(_ key: String) throws(OffpeakError) -> [(String, Node)]? {
        guard let node = value(key) else { return nil }
        return try reader.strings(node, at: path(key))
    }

    /// A nested mapping, checked against its own allowed keys.
    func mapping(_ key: String, allowed: [String]) throws(OffpeakError) -> YAMLMapping? {
        guard let node = value(key) else { return nil }
        return try reader.mapping(node, at: path(key), allowed: allowed)
    }
}
