import Foundation
import Yams

/// Reads `jobs/NAME.yaml` into a `JobSpec`, checking everything a run would otherwise trip over
/// later: unknown fields, wrong types, impossible values, template variables no item supplies,
/// globs that match nothing.
///
/// Every error names the file, line and column and the field (`jobs/x.yaml:12:5: max_attempts:
/// expected a whole number from 1 to 100, got 'abc'`), so a spec can be fixed without guessing.
enum JobSpecParser {
    /// The top-level fields a spec may have.
    static let fields = [
        "name", "kind", "tier", "system", "template", "items", "inputs", "output", "max_tokens",
        "temperature", "constraints", "budget", "cache_ttl", "deadline", "wait_for_cheaper_prices", "window",
        "schedule", "timezone",
        "checkpoint_max_age", "downgrade_on_battery", "instructions", "batching", "queue", "prompt_cache",
        "sources", "max_attempts", "chunking", "lane", "reuse", "digest", "feeds", "max_new", "search",
        "audit", "robots", "tags", "fallbacks", "prompt_cache_ttl",
    ]

    /// Parses one spec.
    /// - Parameters:
    ///   - yaml: The spec's text.
    ///   - path: The file as the user should see it (relative to the workspace when possible);
    ///     it prefixes every message and its base name is the default job name.
    ///   - workspace: The folder `inputs` globs and `output` are relative to.
    /// - Throws: `OffpeakError` with `.dataError` and a `path:line:column` location.
    static func parse(yaml: String, path: String, workspace: URL) throws(OffpeakError) -> JobSpec {
        let reader = YAMLNodeReader(path: path, status: .dataError)
        guard let document = try reader.compose(yaml) else {
            let start = YAMLNodeReader.Position(line: 1, column: 1)
            throw reader.error(
                "", "empty job spec; expected at least 'kind' and 'items' or 'inputs'", at: start)
        }
        let root = try reader.mapping(document, at: "", allowed: fields)
        let name = try jobName(root, path: path)
        guard let kind = try root.choice("kind", as: JobSpec.Kind.self) else {
            throw root.missing(
                "kind", "one of \(JobSpec.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let (template, templateNode) = try template(root, kind: kind)
        var spec = JobSpec(name: name, kind: kind, template: template, output: try output(root, name: name))
        spec.tier = try root.choice("tier", as: JobSpec.Tier.self) ?? .balanced
        spec.system = try root.string("system")
        spec.maxTokens = try root.wholeNumber("max_tokens", in: 1...200_000) ?? 512
        spec.temperature = try root.number("temperature", in: 0...2)
        spec.constraints = try constraints(root)
        spec.budget = try budget(root)
        let long = ValueLimits.longDuration
        spec.cacheTTL = try root.duration("cache_ttl", allowZero: true, atMost: long) ?? 24 * 3600
        spec.reuse = try root.choice("reuse", as: JobSpec.Reuse.self)
        spec.robots = try root.choice("robots", as: JobSpec.Robots.self)
        spec.digest = try digest(root)
        spec.deadline = try root.duration("deadline", atMost: long)
        if try root.bool("wait_for_cheaper_prices") == true {
            guard spec.deadline != nil else {
                throw reader.error(
                    "wait_for_cheaper_prices",
                    "needs a deadline: how long the job may wait for them (deadline: 24h)",
                    at: root.location("wait_for_cheaper_prices"))
            }
            spec.waitForCheaperPrices = true
        }
        spec.tags = try tags(root, reader: reader)
        if let chain = root.value("fallbacks") {
            spec.fallbacks = try FallbackRoute.chain(chain, at: "fallbacks", reader: reader)
        }
        spec.lane = try root.choice("lane", as: JobSpec.Lane.self)
        spec.window = try root.duration("window", atMost: ValueLimits.window)
        spec.schedule = try schedule(root)
        spec.timezone = try timezone(root)
        spec.checkpointMaxAge = try root.duration("checkpoint_max_age", atMost: long) ?? 3600
        spec.downgradeOnBattery = try root.bool("downgrade_on_battery") ?? false
        spec.maxAttempts = try root.wholeNumber("max_attempts", in: 1...100) ?? 5
        spec.instructions = try root.string("instructions")
        spec.batching = try batching(root)
        spec.audit = try audit(root)
        spec.chunking = try chunking(root, kind: kind)
        spec.acceptsSubmissions = try root.bool("queue") ?? false
        spec.promptCache = try root.bool("prompt_cache") ?? true
        spec.promptCacheTTL = try root.choice("prompt_cache_ttl", as: JobSpec.CacheTTLChoice.self)?.ttl
        spec.feeds = try feeds(root, kind: kind)
        spec.maxNew = try maxNew(root, feeds: spec.feeds)
        let items = try items(
            root, workspace: workspace, allowEmpty: spec.acceptsSubmissions || !spec.feeds.isEmpty)
        try checkVariables(of: template, at: templateNode, kind: kind, items: items, reader: reader)
        if !spec.feeds.isEmpty { try checkFeedVariables(of: template, at: templateNode, reader: reader) }
        spec.items = items.map(\.item)
        spec.inputs = try root.strings("inputs")?.map(\.0) ?? []
        if let node = root.value("sources") {
            spec.sources = try sources(node, at: "sources", reader: reader)
        }
        if let node = root.value("search") { spec.search = try search(node, at: "search", reader: reader) }
        try checkSearches(&spec, root: root, items: items)
        spec.sourcePath = path
        return spec
    }

    /// `tags:`, each one a tag (`Tags.problem`); nil when there are none.
    static func tags(_ root: YAMLMapping, reader: YAMLNodeReader) throws(OffpeakError) -> [String]? {
        guard let node = root.value("tags") else { return nil }
        var tags: [String] = []
        for (index, (text, element)) in try reader.strings(node, at: "tags").enumerated() {
            if let problem = Tags.problem(text) {
                throw reader.error(
                    "tags[\(index + 1)]", "\(problem); expected a tag like project:atlas", at: element)
            }
            tags.append(text)
        }
        return tags.isEmpty ? nil : tags
    }

    /// A list of research-source URLs (a single URL counts as a list of one). Each must be http or
    /// https with a host: anything else could never be fetched, and finding that out at run time
    /// would fail items long after the spec was written.
    static func sources(_ node: Node, at field: String, reader: YAMLNodeReader) throws(OffpeakError)
        -> [String]
    {
        var urls: [String] = []
        for (index, (text, element)) in try reader.strings(node, at: field).enumerated() {
            let url = text.trimmingCharacters(in: .whitespaces)
            let components = URLComponents(string: url)
            let scheme = components?.scheme?.lowercased()
            let problem: String?
            if components == nil || scheme == nil || url.contains(where: \.isWhitespace) {
                problem = "expected an http or https URL, got '\(text)'"
            } else if let scheme, scheme != "http" && scheme != "https" {
                problem = "expected an http or https URL, got '\(text)' (scheme '\(scheme)')"
            } else if components?.host?.isEmpty ?? true {
                problem = "expected a URL with a host, like https://example.org/page, got '\(text)'"
            } else {
                problem = nil
            }
            if let problem { throw reader.error("\(field)[\(index + 1)]", problem, at: element) }
            urls.append(url)
        }
        return urls
    }

    /// `name`, or the file's base name; either must be a lowercase slug, as it names `out/<name>`.
    private static func jobName(_ root: YAMLMapping, path: String) throws(OffpeakError) -> String {
        let rule = "lowercase letters, digits, '-' and '_', starting with a letter or digit"
        if let name = try root.string("name") {
            guard isJobName(name) else {
                throw root.reader.error("name", "expected \(rule), got '\(name)'", at: root.value("name"))
            }
            return name
        }
        let base = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        guard isJobName(base) else {
            throw root.reader.error(
                "name", "the file name '\(base)' is not a valid job name (\(rule)); add a 'name' field",
                at: root.node)
        }
        return base
    }

    static func isJobName(_ name: String) -> Bool {
        let scalars = Array(name.unicodeScalars)
        func allowed(_ scalar: Unicode.Scalar) -> Bool {
            ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar)
        }
        guard let first = scalars.first, allowed(first) else { return false }
        return scalars.allSatisfy { allowed($0) || $0 == "-" || $0 == "_" }
    }

    /// The template and the node it was read from (`nil` for summarize's default).
    private static func template(
        _ root: YAMLMapping, kind: JobSpec.Kind
    ) throws(OffpeakError) -> (Template, Node?) {
        guard let node = root.value("template") else {
            guard kind == .summarize else {
                throw root.missing("template", "a '\(kind.rawValue)' job needs a template (the user message)")
            }
            // Shared with `offpeak summarize`, so both phrase the request alike and share cache entries.
            do { return (try Template(JobSpec.defaultSummarizeTemplate), nil) } catch {
                throw OffpeakError(.software, "the default summarize template does not parse: \(error)")
            }
        }
        let source = try root.reader.string(node, at: "template")
        guard !source.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw root.reader.error("template", "expected the user message, got an empty string", at: node)
        }
        do {
            return (try Template(source), node)
        } catch {
            let problem =
                switch error {
                case .unclosed(let offset): "'{{' at character \(offset + 1) has no closing '}}'"
                case .badName(let name):
                    "'{{\(name)}}' is not a variable name (letters, digits, '_' and '.')"
                }
            throw root.reader.error("template", problem, at: node)
        }
    }

    /// `output`, defaulting to `out/<name>`; `OutputFolder` keeps it inside the workspace.
    private static func output(_ root: YAMLMapping, name: String) throws(OffpeakError) -> String {
        guard let raw = try root.string("output") else { return "out/\(name)" }
        do {
            return try OutputFolder.checked(raw)
        } catch {
            throw root.reader.error("output", error.description, at: root.value("output"))
        }
    }
}
