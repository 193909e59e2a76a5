import Foundation

extension JobSpec {
    /// The template a summarize job uses when its spec gives none.
    static let defaultSummarizeTemplate =
        "Summarize the following document in two or three sentences.\n\n<document>\n{{item}}\n</document>"

    /// The job behind `offpeak summarize FILES...`: one item per file, in the order given.
    /// - Parameters:
    ///   - output: `--out`, held to the rule of a spec's `output` (`OutputFolder`).
    ///   - promptCache: false for `--no-prompt-cache`: the system prompt is never marked for the
    ///     provider's prompt cache, as a spec's `prompt_cache: false` (for a proxy that rejects it).
    ///   - tags, deadline, waitForCheaperPrices: `--tag`, `--deadline` and
    ///     `--wait-for-cheaper-prices`, as a spec's `tags`, `deadline` and `wait_for_cheaper_prices`.
    /// - Throws: `OffpeakError`: 64 for an `--out` outside the workspace, 65 naming a file that
    ///   cannot be read or is not UTF-8 text (at the line and column where it stops being text).
    public static func summarize(
        files: [String], tier: Tier, output: String?, maxTokens: Int, promptCache: Bool = true,
        workspace: Workspace, tags: [String] = [], deadline: TimeInterval? = nil,
        waitForCheaperPrices: Bool = false
    ) throws(OffpeakError) -> JobSpec {
        if let problem = tags.lazy.compactMap(Tags.problem).first {
            throw OffpeakError(.usage, "--tag: \(problem); expected a tag like project:atlas")
        }
        var folder = "out/summarize"
        if let output {
            do { folder = try OutputFolder.checked(output) } catch {
                throw OffpeakError(.usage, "--out: \(error.description)")
            }
        }
        let template: Template
        do { template = try Template(defaultSummarizeTemplate) } catch {
            throw OffpeakError(.software, "the built-in summarize template does not parse")
        }
        var spec = JobSpec(
            name: "summarize", kind: .summarize, template: template, output: folder)
        spec.tier = tier
        spec.maxTokens = maxTokens
        spec.promptCache = promptCache
        spec.tags = tags.isEmpty ? nil : tags
        spec.deadline = deadline
        spec.waitForCheaperPrices = waitForCheaperPrices && deadline != nil ? true : nil
        spec.system = "You write short, faithful summaries. Use only facts stated in the document."
        var seen: Set<String> = []
        for file in files {
            let url = workspace.url(for: file)
            let id = workspace.displayPath(url)
            guard seen.insert(id).inserted else { continue }
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw OffpeakError(.dataError, "cannot read \(file)", location: file)
            }
            let text = try UTF8Text.decode(data, file: file, status: .dataError)
            spec.items.append(
                Item(id: id, variables: ["item": text, "path": id, "name": url.lastPathComponent, "id": id]))
        }
        guard !spec.items.isEmpty else {
            throw OffpeakError(.usage, "summarize needs at least one file")
        }
        return spec
    }
}
