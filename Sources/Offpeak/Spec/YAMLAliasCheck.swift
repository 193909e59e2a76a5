internal import CYaml
import Foundation

/// Refuses alias bombs before Yams builds the tree, so any spec or `offpeak.yaml` is accepted or
/// refused in time linear in its length.
///
/// Yams checks every mapping for duplicate keys by hashing the keys, and a key that is an alias
/// of a nested list is hashed in full: anchors ten wide nested nine deep, used as a key
/// (`{? *a8 : x}`), are a billion nodes to hash, minutes of work in `jobs validate`, `run` and every
/// cron `tick`. No field needs a list or a mapping as a key, nor aliases that stand for thousands
/// of values, so this walks the events of libyaml (the parser under Yams, which ships it as
/// `CYaml`) once and refuses either at the node where it is written. Aliases used as values stay
/// as they were (an `&anchor` on one item's field and `*anchor` on another's).
enum YAMLAliasCheck {
    /// Most values aliases may stand for in one file, each alias counting every node under its anchor.
    static let limit = 10_000

    /// What to refuse and where: the field path and 1-based position of the node.
    struct Refusal: Error, Equatable {
        var field: String
        var problem: String
        var line: Int
        var column: Int
    }

    /// Walks the first document of `yaml`; a syntax error ends the walk without a refusal, so Yams
    /// reports it as it always has.
    static func check(_ yaml: String) throws(Refusal) {
        let bytes = Array(yaml.utf8)
        guard !bytes.isEmpty else { return }
        let refusal = bytes.withUnsafeBufferPointer { buffer -> Refusal? in
            var parser = yaml_parser_t()
            guard yaml_parser_initialize(&parser) == 1 else { return nil }
            defer { yaml_parser_delete(&parser) }
            yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING)
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            var walk = AliasWalk()
            var event = yaml_event_t()
            while yaml_parser_parse(&parser, &event) == 1 {
                defer { yaml_event_delete(&event) }
                let position = (
                    line: Int(event.start_mark.line) + 1, column: Int(event.start_mark.column) + 1
                )
                let problem: (field: String, text: String)?
                switch event.type {
                case YAML_SCALAR_EVENT:
                    let scalar = event.data.scalar
                    let value = {
                        String(
                            decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length),
                            as: UTF8.self)
                    }
                    walk.scalar(anchor: name(scalar.anchor), value: value)
                    problem = nil
                case YAML_ALIAS_EVENT:
                    problem = walk.alias(name(event.data.alias.anchor) ?? "")
                case YAML_SEQUENCE_START_EVENT:
                    problem = walk.start(.list, anchor: name(event.data.sequence_start.anchor))
                case YAML_MAPPING_START_EVENT:
                    problem = walk.start(.mapping, anchor: name(event.data.mapping_start.anchor))
                case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                    walk.end()
                    problem = nil
                case YAML_DOCUMENT_END_EVENT, YAML_STREAM_END_EVENT:
                    return nil
                default:
                    problem = nil
                }
                if let problem {
                    return Refusal(
                        field: problem.field, problem: problem.text, line: position.line,
                        column: position.column)
                }
            }
            return nil
        }
        if let refusal { throw refusal }
    }

    private static func name(_ anchor: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        anchor.map { String(cString: $0) }
    }
}

/// One pass over a document's nodes: where each is (its field path, whether it is a key) and how
/// many nodes each anchor stands for.
private struct AliasWalk {
    enum Shape: Equatable {
        case scalar(String)
        case list, mapping

        var described: String {
            switch self {
            case .scalar(let text): return "'\(text)'"
            case .list: return "a list"
            case .mapping: return "a mapping"
            }
        }
    }

    /// A list or mapping still open.
    struct Frame {
        var shape: Shape
        var path: String
        var anchor: String?
        /// Nodes in it so far, itself included, aliases counted as what they stand for.
        var nodes = 1
        /// Nodes directly in it; in a mapping, keys and values alternate.
        var children = 0
        /// The last key read, naming the value that follows it.
        var key: String?
    }

    private var open: [Frame] = []
    private var anchors: [String: (nodes: Int, shape: Shape)] = [:]
    /// Nodes aliases have stood for so far.
    private var aliased = 0

    /// The field path of the next node, and whether it is a mapping key.
    private var next: (path: String, isKey: Bool) {
        guard let top = open.last else { return ("", false) }
        if top.shape == .mapping {
            if top.children % 2 == 0 { return (top.path, true) }
            return (YAMLMapping.join(top.path, top.key ?? "?"), false)
        }
        return ("\(top.path)[\(top.children + 1)]", false)
    }

    mutating func scalar(anchor: String?, value: () -> String) {
        let isKey = next.isKey
        guard isKey || anchor != nil else { return finish(nodes: 1) }
        let text = value()
        if let anchor { anchors[anchor] = (1, .scalar(text)) }
        if isKey { open[open.count - 1].key = text }
        finish(nodes: 1)
    }

    mutating func alias(_ anchor: String) -> (field: String, text: String)? {
        let place = next
        // An undefined alias is left to Yams, which reports it.
        let target = anchors[anchor] ?? (1, .scalar(""))
        if place.isKey {
            guard case .scalar(let text) = target.shape else {
                return (
                    place.path,
                    "expected a field name, got '*\(anchor)', an alias of \(target.shape.described)"
                )
            }
            open[open.count - 1].key = text
        }
        aliased += target.nodes
        if aliased > YAMLAliasCheck.limit {
            let limit = YAMLNodeReader.grouped(YAMLAliasCheck.limit)
            return (
                place.path,
                "too many aliases: '*\(anchor)' stands for \(YAMLNodeReader.grouped(target.nodes)) values; "
                    + "aliases may stand for at most \(limit) in one file"
            )
        }
        finish(nodes: target.nodes)
        return nil
    }

    mutating func start(_ shape: Shape, anchor: String?) -> (field: String, text: String)? {
        let place = next
        if place.isKey { return (place.path, "expected a field name, got \(shape.described)") }
        open.append(Frame(shape: shape, path: place.path, anchor: anchor))
        return nil
    }

    mutating func end() {
        guard let frame = open.popLast() else { return }
        if let anchor = frame.anchor { anchors[anchor] = (frame.nodes, frame.shape) }
        finish(nodes: frame.nodes)
    }

    private mutating func finish(nodes: Int) {
        guard !open.isEmpty else { return }
        open[open.count - 1].nodes += nodes
        open[open.count - 1].children += 1
    }
}
