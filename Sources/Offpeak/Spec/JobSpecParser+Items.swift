import Foundation
import Yams

/// A spec's items: inline `items` and files matched by `inputs`, each remembered with the field
/// and node it came from so later checks (ids, template variables) can point at it.
extension JobSpecParser {
    struct LocatedItem {
        var item: JobSpec.Item
        /// `items[2]` or `inputs[1]`, 1-based like the default ids.
        var field: String
        var node: Node
    }

    static func items(_ root: YAMLMapping, workspace: URL, allowEmpty: Bool = false) throws(OffpeakError)
        -> [LocatedItem]
    {
        let reader = root.reader
        var located: [LocatedItem] = []
        if let node = root.value("items") {
            for (index, element) in try reader.list(node, at: "items").enumerated() {
                located.append(try inlineItem(element, position: index + 1, reader: reader))
            }
        }
        for (index, (pattern, node)) in (try root.strings("inputs") ?? []).enumerated() {
            let field = "inputs[\(index + 1)]"
            located += try inputItems(pattern, field: field, node: node, workspace: workspace, reader: reader)
        }
        guard !located.isEmpty || allowEmpty else {
            throw reader.error(
                "items",
                "no items: give 'items' (a list) or 'inputs' (file globs) with at least one entry, "
                    + "'feeds' on a research job, or 'queue: true' to take submitted requests",
                at: root.value("items") ?? root.value("inputs") ?? root.location("items"))
        }
        var seen: [String: String] = [:]
        for entry in located {
            // The run's digest request has this id (`RunSession.digestItemID`).
            if entry.item.id == "#digest" {
                throw reader.error(
                    entry.field, "id '#digest' is kept for the job's digest; give the item another id",
                    at: entry.node)
            }
            if let first = seen[entry.item.id] {
                throw reader.error(
                    entry.field, "id '\(entry.item.id)' is already used by \(first)", at: entry.node)
            }
            seen[entry.item.id] = entry.field
        }
        return located
    }

    /// A string (variables `item` and `id`) or a mapping of variables with an optional `id`.
    private static func inlineItem(
        _ node: Node, position: Int, reader: YAMLNodeReader
    ) throws(OffpeakError) -> LocatedItem {
        let field = "items[\(position)]"
        switch node {
        case .scalar(let scalar) where NSNull.construct(from: scalar) == nil:
            let item = JobSpec.Item(
                id: String(position), variables: ["item": scalar.string, "id": String(position)])
            return LocatedItem(item: item, field: field, node: node)
        case .mapping(let mapping):
            var variables: [String: String] = [:]
            var sources: [String] = []
            var search: JobSpec.Search?
            for (key, value) in mapping {
                let name = try reader.string(key, at: field)
                // `search`, a mapping: the item's own web search (`JobSpecParser.search`).
                if name == "search", case .mapping = value {
                    search = try JobSpecParser.search(value, at: "\(field).search", reader: reader)
                    continue
                }
                // `sources` is the one non-text key: the item's own research-source URLs.
                if name == "sources" {
                    let isNull = value.scalar.map { NSNull.construct(from: $0) != nil } ?? false
                    if !isNull {
                        sources = try JobSpecParser.sources(value, at: "\(field).sources", reader: reader)
                    }
                    continue
                }
                guard case .scalar(let scalar) = value else {
                    let got = reader.describe(value)
                    throw reader.error("\(field).\(name)", "expected a text value, got \(got)", at: value)
                }
                variables[name] = NSNull.construct(from: scalar) == nil ? scalar.string : ""
            }
            let id = variables["id"] ?? String(position)
            guard !id.isEmpty else {
                throw reader.error("\(field).id", "expected a non-empty id", at: node)
            }
            variables["id"] = id
            let item = JobSpec.Item(id: id, variables: variables, sources: sources, search: search)
            return LocatedItem(item: item, field: field, node: node)
        default:
            let got = node.scalar != nil ? "nothing" : reader.describe(node)
            throw reader.error(field, "expected a string or a mapping of variables, got \(got)", at: node)
        }
    }

    /// One item per file `pattern` matches: `item` (contents), `path`, `name`, `id` (= path).
    private static func inputItems(
        _ pattern: String, field: String, node: Node, workspace: URL, reader: YAMLNodeReader
    ) throws(OffpeakError) -> [LocatedItem] {
        let paths: [String]
        do {
            paths = try InputGlob.matches(pattern, workspace: workspace)
        } catch {
            let problem =
                switch error {
                case .empty: "expected a glob like 'docs/*.md', got an empty string"
                case .absolute: "expected a glob relative to the workspace, got '\(pattern)'"
                case .leavesWorkspace: "expected a glob inside the workspace, got '\(pattern)' (no '..')"
                }
            throw reader.error(field, problem, at: node)
        }
        guard !paths.isEmpty else {
            throw reader.error(field, "'\(pattern)' matches no file in the workspace", at: node)
        }
        var items: [LocatedItem] = []
        for path in paths {
            let url = workspace.appendingPathComponent(path)
            let data: Data
            do { data = try Data(contentsOf: url) } catch {
                throw OffpeakError(
                    .ioError, "\(field): cannot read '\(path)'", location: reader.location(of: node))
            }
            let text: String
            switch UTF8Text.decode(data) {
            case .success(let decoded): text = decoded
            case .failure(let problem):
                let place = "\(path):\(problem.line):\(problem.column)"
                throw reader.error(field, "\(place) (matched by '\(pattern)'): \(problem)", at: node)
            }
            let variables = ["item": text, "path": path, "name": url.lastPathComponent, "id": path]
            items.append(
                LocatedItem(item: JobSpec.Item(id: path, variables: variables), field: field, node: node))
        }
        return items
    }

    /// Every template variable must be supplied by every item, or the prompt would silently
    /// render with a hole in it.
    static func checkVariables(
        of template: Template, at templateNode: Node?, kind: JobSpec.Kind, items: [LocatedItem],
        reader: YAMLNodeReader
    ) throws(OffpeakError) {
        for variable in template.variables.sorted() where variable != JobSpec.sourcesVariable {
            guard let entry = items.first(where: { $0.item.variables[variable] == nil }) else { continue }
            let has = entry.item.variables.keys.sorted().joined(separator: ", ")
            guard let templateNode else {
                let problem =
                    "has no '\(variable)', which the default \(kind.rawValue) template uses (it has: \(has))"
                throw reader.error(entry.field, problem, at: entry.node)
            }
            let problem =
                "variable '\(variable)' is not supplied by \(entry.field) (id '\(entry.item.id)', which has: \(has))"
            throw reader.error("template", problem, at: templateNode)
        }
    }
}
