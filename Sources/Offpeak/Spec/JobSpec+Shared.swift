import Foundation

/// A job's spec as hosts sharing a store compare it (issue 23, item 7): its content, not where its
/// file is on one host, and which fields of two such specs differ, named as a spec file names them.
extension JobSpec {
    /// The spec's canonical JSON without its file's path (`sourcePath`): the same on every host that
    /// has the same spec, wherever its workspace is.
    var sharedText: String {
        var spec = self
        spec.sourcePath = nil
        return CanonicalJSON.text(spec)
    }

    /// The fields whose values differ between two specs' `sharedText`s, by the names a spec file
    /// gives them (`max_tokens`, `constraints.power`), sorted; `["spec"]` when one of them cannot
    /// be read as a spec's JSON (written by another offpeak), and none when they are equal.
    static func differingFields(_ first: String, _ second: String) -> [String] {
        guard first != second else { return [] }
        guard let one = object(first), let other = object(second) else { return ["spec"] }
        var fields: Set<String> = []
        for key in Set(one.keys).union(other.keys) where !same(one[key], other[key]) {
            let (left, right) = (one[key] as? [String: Any], other[key] as? [String: Any])
            guard nestedFields.contains(key), let left, let right else {
                fields.insert(fieldName(key))
                continue
            }
            for inner in Set(left.keys).union(right.keys) where !same(left[inner], right[inner]) {
                // `batching: off` and `chunking: off` are the switch, written as the section itself.
                fields.insert(
                    inner == "enabled" ? fieldName(key) : "\(fieldName(key)).\(fieldName(inner))")
            }
        }
        return fields.sorted()
    }

    /// The sections a spec file writes as a mapping of its own fields, named one by one.
    private static let nestedFields: Set<String> = ["batching", "chunking", "constraints", "budget", "audit"]

    /// A spec file's name for the field the JSON calls `key`: the snake case of the Swift name but
    /// where the file says otherwise.
    private static func fieldName(_ key: String) -> String {
        switch key {
        case "acceptsSubmissions": return "queue"
        case "cacheTTL": return "cache_ttl"
        case "maxItemsGiven": return "max_items"
        case "storedFeeds": return "feeds"
        default:
            var name = ""
            for character in key {
                if character.isUppercase {
                    name += "_" + character.lowercased()
                } else {
                    name.append(character)
                }
            }
            return name
        }
    }

    private static func object(_ text: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
    }

    /// Whether two decoded JSON values are equal (a missing one equals only another missing one).
    /// Mappings and lists are compared member by member: on Linux a decoded mapping is a Swift
    /// dictionary, which `isEqual` does not compare (every mapping field read as changed).
    private static func same(_ one: Any?, _ other: Any?) -> Bool {
        switch (one, other) {
        case (nil, nil): return true
        case (let one as [String: Any], let other as [String: Any]):
            return Set(one.keys) == Set(other.keys) && one.keys.allSatisfy { same(one[$0], other[$0]) }
        case (let one as [Any], let other as [Any]):
            return one.count == other.count && zip(one, other).allSatisfy { same($0, $1) }
        case (let one?, let other?): return (one as? NSObject)?.isEqual(other) ?? false
        default: return false
        }
    }
}
