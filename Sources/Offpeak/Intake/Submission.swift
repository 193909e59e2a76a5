import Foundation

/// One request handed in by another program: a JSON line on `offpeak submit`'s stdin, or a file
/// dropped in the job's spool folder.
///
/// `{"id": "client-7", "vars": {"item": "..."}, "tier": "fast"}` fills the job's template;
/// `{"prompt": "..."}` is sent as the user message as it is. `id` is the caller's own id and must be
/// unique within the job's open run; `tier` overrides the job's; `tags` (a list of tags: `Tags`)
/// count its spend under them besides its job's.
struct Submission: Sendable, Equatable {
    var clientId: String?
    var variables: [String: String]
    var prompt: String?
    var tier: JobSpec.Tier?
    /// `"cache": "no-cache"` (don't read the cache) or `"refresh"` (read nothing, write anew).
    var cachePolicy: RequestRecord.CachePolicy = .normal
    /// `"tags": ["customer:acme"]`: what its calls' spend is counted under, besides its job's tags.
    var tags: [String] = []
    /// Where it came from (`stdin:12`, `spool/inbox/a.jsonl:3`, `spool/inbox/note.txt`), so a
    /// refusal after parsing (a repeated id) names its line too.
    var location: String?

    init(
        clientId: String? = nil, variables: [String: String] = [:], prompt: String? = nil,
        tier: JobSpec.Tier? = nil, location: String? = nil
    ) {
        self.clientId = clientId
        self.variables = variables
        self.prompt = prompt
        self.tier = tier
        self.location = location
    }

    static let fields: Set<String> = ["id", "vars", "prompt", "tier", "cache", "tags"]

    /// Parses one JSON line for `spec`.
    /// - Parameter location: where the line is, for the message (`stdin:12`, `spool/j/a.json:3`).
    /// - Throws: `OffpeakError` (65) naming the location and field and what was expected.
    static func parse(_ line: String, location: String, spec: JobSpec) throws(OffpeakError)
        -> Submission
    {
        func fail(_ field: String, _ problem: String) -> OffpeakError {
            OffpeakError(.dataError, field.isEmpty ? problem : "\(field): \(problem)", location: location)
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw fail("", "expected one JSON object per line, like {\"vars\": {\"item\": \"...\"}}")
        }
        if let unknown = object.keys.sorted().first(where: { !fields.contains($0) }) {
            throw fail(unknown, "unknown field; expected id, vars, prompt, tier, cache or tags")
        }
        var submission = Submission(location: location)
        if let id = object["id"] {
            guard let text = idText(id) else { throw fail("id", "expected a string or a whole number") }
            if let problem = Submission.problem(withID: text) { throw fail("id", problem) }
            submission.clientId = text
        }
        if let vars = object["vars"] {
            guard let mapping = vars as? [String: Any] else {
                throw fail("vars", "expected an object of strings")
            }
            for (key, value) in mapping {
                guard let text = scalarText(value) else {
                    throw fail("vars.\(key)", "expected a string or number")
                }
                submission.variables[key] = text
            }
        }
        if let prompt = object["prompt"] {
            guard let text = prompt as? String, !text.isEmpty else {
                throw fail("prompt", "expected a non-empty string")
            }
            submission.prompt = text
        }
        if let tier = object["tier"] {
            guard let text = tier as? String, let value = JobSpec.Tier(rawValue: text) else {
                throw fail("tier", "expected fast, balanced or powerful")
            }
            submission.tier = value
        }
        if let cache = object["cache"] {
            guard let text = cache as? String, let policy = RequestRecord.CachePolicy(rawValue: text) else {
                throw fail("cache", "expected default, no-cache or refresh")
            }
            submission.cachePolicy = policy
        }
        if let tags = object["tags"] {
            guard let list = tags as? [Any] else {
                throw fail("tags", "expected a list of tags, like [\"customer:acme\"]")
            }
            for (index, tag) in list.enumerated() {
                guard let text = tag as? String else { throw fail("tags[\(index + 1)]", "expected a string") }
                if let problem = Tags.problem(text) { throw fail("tags[\(index + 1)]", problem) }
                submission.tags.append(text)
            }
        }
        switch (submission.prompt, submission.variables.isEmpty) {
        case (nil, true): throw fail("", "expected 'vars' (the template's variables) or 'prompt'")
        case (.some, false): throw fail("prompt", "give 'vars' or 'prompt', not both")
        case (nil, false):
            submission.variables["id"] = submission.variables["id"] ?? submission.clientId ?? ""
            if let missing = spec.template.variables.sorted().first(where: { submission.variables[$0] == nil }
            ) {
                throw fail("vars.\(missing)", "missing; the job's template uses {{\(missing)}}")
            }
        case (.some, true): break
        }
        return submission
    }

    /// The user message this submission sends.
    func userMessage(for spec: JobSpec) -> String {
        prompt ?? spec.template.render(variables)
    }

    /// A string, or a number as JSON wrote it; `true` is not the text "1".
    private static func scalarText(_ value: Any) -> String? {
        if let text = value as? String { return text }
        if let number = value as? NSNumber, !isBoolean(number) { return number.stringValue }
        return nil
    }

    /// A string, or a whole number: a fraction's digits are not kept as written (`1.50` reads as
    /// `1.5`), so two different ids could become one.
    private static func idText(_ value: Any) -> String? {
        if let text = value as? String { return text }
        guard let number = value as? NSNumber, !isBoolean(number) else { return nil }
        let type = String(cString: number.objCType)
        guard type != "d" && type != "f" || number is NSDecimalNumber else { return nil }
        let text = number.stringValue
        return text.allSatisfy { $0.isNumber || $0 == "-" } ? text : nil
    }

    private static func isBoolean(_ number: NSNumber) -> Bool {
        type(of: number) == type(of: NSNumber(value: true))
    }
}
