import Foundation
import OffpeakTestSupport
import Testing

/// Every link between the docs resolves (issue 47, item 4): a relative link names a file of the
/// checkout, and its `#anchor` a heading of that file, as GitHub makes heading anchors.
@Suite(.ownThreads) struct DocsLinksTests {
    static let root = BuiltBinaries.packageRoot

    /// The documents a reader follows links between.
    static var documents: [String] {
        let docs =
            (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path))
            ?? []
        return ["README.md", "CONTRIBUTING.md", "bench/README.md"]
            + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/\($0)" }
    }

    /// GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces made
    /// `-`; a repeated one gets `-1`, `-2`, ….
    static func anchors(_ markdown: String) -> Set<String> {
        var seen: [String: Int] = [:]
        var anchors: Set<String> = []
        var fenced = false
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { fenced.toggle() }
            guard !fenced, line.hasPrefix("#") else { continue }
            let title = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
            let slug = String(
                title.lowercased().unicodeScalars.compactMap { scalar -> Character? in
                    if scalar == " " { return "-" }
                    if CharacterSet.alphanumerics.contains(scalar) || scalar == "-" || scalar == "_" {
                        return Character(scalar)
                    }
                    return nil
                })
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            anchors.insert(count == 0 ? slug : "\(slug)-\(count)")
        }
        return anchors
    }

    /// The targets of the document's inline links `[text](target)`, outside code.
    static func links(_ markdown: String) -> [String] {
        var links: [String] = []
        var fenced = false
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { fenced.toggle() }
            guard !fenced else { continue }
            // Code spans hold no links.
            let prose = line.split(separator: "`", omittingEmptySubsequences: false).enumerated()
                .filter { $0.offset % 2 == 0 }.map(\.element).joined(separator: " ")
            var rest = Substring(prose)
            while let open = rest.range(of: "](") {
                let after = rest[open.upperBound...]
                guard let close = after.firstIndex(of: ")") else { break }
                links.append(String(after[..<close]))
                rest = after[close...]
            }
        }
        return links
    }

    @Test func everyLinkBetweenTheDocsResolves() throws {
        #expect(Self.documents.count >= 14, "\(Self.documents)")
        var broken: [String] = []
        var checked = 0
        for document in Self.documents {
            let url = Self.root.appendingPathComponent(document)
            let text = try String(contentsOf: url, encoding: .utf8)
            for link in Self.links(text) where !link.contains("://") && !link.hasPrefix("mailto:") {
                checked += 1
                let parts = link.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let path = String(parts[0])
                let target = path.isEmpty ? url : url.deletingLastPathComponent().appendingPathComponent(path)
                guard FileManager.default.fileExists(atPath: target.standardizedFileURL.path) else {
                    broken.append("\(document): \(link) (no such file)")
                    continue
                }
                if parts.count == 2, target.pathExtension == "md" {
                    let headings = Self.anchors(try String(contentsOf: target, encoding: .utf8))
                    if !headings.contains(String(parts[1])) {
                        broken.append("\(document): \(link) (no such heading)")
                    }
                }
            }
        }
        #expect(checked > 50, "links checked: \(checked)")
        #expect(broken.isEmpty, "\(broken.joined(separator: "\n"))")
    }
}
