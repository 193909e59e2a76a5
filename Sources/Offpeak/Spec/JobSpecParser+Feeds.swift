import Foundation
import Yams

/// `feeds` and `max_new`: a research job's RSS or Atom feeds, whose entries become its items
/// (issue 24), and how many new ones a run takes.
extension JobSpecParser {
    /// The variables a feed entry's item supplies to the template (besides `sources`, its linked
    /// page): a template that uses another could never be filled for one.
    static let feedVariables: Set<String> = ["id", "item"]

    /// `feeds`: http/https URLs, checked like `sources`, each given once; `[]` without the field.
    /// - Throws: a located error for feeds on a job that is not `research`, an empty list, a
    ///   repeated feed or a bad URL.
    static func feeds(_ root: YAMLMapping, kind: JobSpec.Kind) throws(OffpeakError) -> [String] {
        let reader = root.reader
        guard let node = root.value("feeds") else { return [] }
        guard kind == .research else {
            throw reader.error(
                "feeds", "only a research job reads feeds (this job is kind '\(kind.rawValue)')",
                at: root.location("feeds"))
        }
        let feeds = try sources(node, at: "feeds", reader: reader)
        guard !feeds.isEmpty else {
            throw reader.error("feeds", "expected at least one feed URL, got an empty list", at: node)
        }
        let elements = try reader.strings(node, at: "feeds").map(\.1)
        for (index, url) in feeds.enumerated() {
            if let first = feeds.firstIndex(of: url), first < index {
                throw reader.error(
                    "feeds[\(index + 1)]", "'\(url)' is already feeds[\(first + 1)]", at: elements[index])
            }
        }
        return feeds
    }

    /// `max_new`: from 1 to `ValueLimits.feedEntries`, and only beside `feeds`; `nil` without it.
    static func maxNew(_ root: YAMLMapping, feeds: [String]) throws(OffpeakError) -> Int? {
        guard let maxNew = try root.wholeNumber("max_new", in: 1...ValueLimits.feedEntries) else {
            return nil
        }
        guard !feeds.isEmpty else {
            throw root.reader.error(
                "max_new", "only a job with 'feeds' takes new entries; add 'feeds' or remove 'max_new'",
                at: root.location("max_new"))
        }
        return maxNew
    }

    /// A job with feeds must have a template that a feed entry's item can fill on its own.
    static func checkFeedVariables(
        of template: Template, at templateNode: Node?, reader: YAMLNodeReader
    ) throws(OffpeakError) {
        let missing = template.variables.sorted().filter {
            $0 != JobSpec.sourcesVariable && !feedVariables.contains($0)
        }
        guard let variable = missing.first else { return }
        let has = feedVariables.sorted().joined(separator: ", ")
        throw reader.error(
            "template", "variable '\(variable)' is not supplied by feed entries (which have: \(has))",
            at: templateNode)
    }
}
