/// The requests that summarize a long item in steps (DESIGN.md, "Long documents"): one map request
/// per chunk, then reduce requests over the chunk summaries, level by level, until they fit one
/// prompt; that last request carries the item's own id and its answer is the item's answer.
///
/// Step ids extend the item's id: `<item>#chunk-0001` for the map step, `<item>#reduce-2-0001`
/// for reduce level 2 (level 1 being the chunks). An item is only chunked when no other item's id
/// starts with its id and `#`, so a step id never names another item.
struct LongDocumentPlanner: Sendable {
    /// One step's request, ready to be stored.
    struct Step: Sendable, Equatable {
        var itemId: String
        var request: CompletionRequest
        var payload: String
        var cacheKey: String
    }

    /// What comes after a level of summaries: the item's final request, or another reduce level.
    enum Reduction: Sendable, Equatable {
        case final(Step)
        case reduce([Step])
    }

    let spec: JobSpec
    let planner: RequestPlanner

    init(spec: JobSpec, planner: RequestPlanner) {
        self.spec = spec
        self.planner = planner
    }

    private var chunker: DocumentChunker {
        DocumentChunker(maxTokens: spec.chunking.maxTokens, overlap: spec.chunking.overlap)
    }

    /// The chunks of a long item, or nil when it is sent whole: chunking is off, the template does
    /// not use `{{item}}`, the item has research sources, its text fits one chunk, or another item's
    /// id starts with this one's and `#`.
    func chunks(of item: JobSpec.Item) -> [String]? {
        guard spec.chunking.enabled, spec.template.variables.contains("item"),
            spec.sources.isEmpty, item.sources.isEmpty,
            let text = item.variables["item"], TokenEstimator.tokens(text) > spec.chunking.maxTokens
        else { return nil }
        let prefix = item.id + "#"
        guard !spec.items.contains(where: { $0.id.hasPrefix(prefix) }) else { return nil }
        let chunks = chunker.chunks(of: text)
        return chunks.count > 1 ? chunks : nil
    }

    /// The map step: one request per chunk.
    func mapSteps(_ item: JobSpec.Item, chunks: [String]) -> [Step] {
        let name = Self.name(of: item)
        return chunks.enumerated().map { index, chunk in
            let prompt = """
                Summarize part \(index + 1) of \(chunks.count) of the document \(name). Keep the facts, \
                names and numbers a reader of the whole document needs: the summaries of all parts \
                are combined afterwards.

                <document>
                \(chunk)
                </document>
                """
            return step(Self.chunkID(item.id, index + 1), prompt: prompt)
        }
    }

    /// What to ask after a level of `summaries` (in document order): the final request when they
    /// fit one prompt (or would make a single group), else reduce requests of `level` over groups of them.
    func reduction(_ item: JobSpec.Item, summaries: [String], level: Int) -> Reduction {
        let joined = summaries.joined(separator: "\n\n")
        let groups = Self.groups(summaries, maxTokens: spec.chunking.maxTokens)
        // One group would only restate the same summaries once more: the final request takes them.
        if TokenEstimator.tokens(joined) <= spec.chunking.maxTokens || groups.count < 2 {
            var variables = item.variables
            variables["item"] = joined
            return .final(step(item.id, prompt: spec.template.render(variables)))
        }
        let name = Self.name(of: item)
        var first = 1
        return .reduce(
            groups.enumerated().map { index, group in
                let range = "\(first) to \(first + group.count - 1) of \(summaries.count)"
                first += group.count
                let prompt = """
                    These are summaries of consecutive parts (\(range)) of the document \(name). \
                    Combine them into one summary that keeps their facts, names and numbers.

                    <document>
                    \(group.joined(separator: "\n\n"))
                    </document>
                    """
                return step(Self.reduceID(item.id, level: level, index + 1), prompt: prompt)
            })
    }

    /// Consecutive summaries packed while their joined text fits `maxTokens`, at least two per
    /// group, so each level has at most half as many summaries as the one before and reducing ends.
    static func groups(_ summaries: [String], maxTokens: Int) -> [[String]] {
        var groups: [[String]] = []
        var current: [String] = []
        for summary in summaries {
            let candidate = current + [summary]
            if current.count < 2 || TokenEstimator.tokens(candidate.joined(separator: "\n\n")) <= maxTokens {
                current = candidate
            } else {
                groups.append(current)
                current = [summary]
            }
        }
        if current.count == 1, let last = groups.popLast() {
            current = last + current
        }
        if !current.isEmpty { groups.append(current) }
        return groups
    }

    /// `<item>#chunk-0001`: part `part` (1-based) of the item.
    static func chunkID(_ item: String, _ part: Int) -> String {
        "\(item)#chunk-\(padded(part))"
    }

    /// `<item>#reduce-2-0001`: group `group` (1-based) of reduce level `level`.
    static func reduceID(_ item: String, level: Int, _ group: Int) -> String {
        "\(item)#reduce-\(level)-\(padded(group))"
    }

    /// The level of one of `item`'s step ids: 1 for a chunk, 2 or more for a reduce step; nil for
    /// an id that is not one of the item's steps.
    static func level(ofStep id: String, item: String) -> Int? {
        let prefix = item + "#"
        guard id.hasPrefix(prefix) else { return nil }
        let rest = id.dropFirst(prefix.count)
        if rest.hasPrefix("chunk-") { return 1 }
        guard rest.hasPrefix("reduce-") else { return nil }
        return Int(rest.dropFirst("reduce-".count).prefix { $0.isNumber })
    }

    private static func name(of item: JobSpec.Item) -> String {
        item.variables["name"] ?? item.id
    }

    private static func padded(_ number: Int) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    private func step(_ id: String, prompt: String) -> Step {
        let request = planner.request(spec, userMessage: prompt)
        return Step(
            itemId: id, request: request, payload: request.canonicalText,
            cacheKey: RequestPlanner.cacheKey(provider: planner.provider, request: request))
    }
}
