import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Output file names (issue 10, item 8): any id gets a unique name of bounded length inside
/// `out/<job>/`, and ids that were named cleanly before keep their names.
@Suite(.ownThreads) struct OutputFileNameTests {
    @Test func everyIdGetsABoundedUniqueNameAndCleanIdsKeepTheirs() throws {
        let long = String(repeating: "q", count: 300)
        let ids = [
            "docs/a.md", "docs/a.txt", "../x", "..", ".hidden", "index", "index.json", "q?",
            String(repeating: "b", count: 230) + ".txt", long, long + "!", long + ".txt",
            String(repeating: "\u{1F600}", count: 200), String(repeating: "x", count: 100_000),
        ]
        let names = OutputWriter.fileNames(for: ids)
        // As before: the stem with unsafe characters as `-`, `.md`, `-2` for a repeat.
        #expect(
            Array(names.prefix(8)) == [
                "docs-a.md", "docs-a-2.md", "item..-x.md", "item..md", "item.hidden.md", "index.md",
                "index-2.md",
                "q-.md",
            ])
        #expect(names[8] == String(repeating: "b", count: 230) + ".md", "a name that fit keeps it")
        // Too long: a readable prefix and a hash of the whole id, so ids that share the prefix differ.
        #expect(Set(names).count == ids.count)
        for (id, name) in zip(ids, names) {
            #expect(name.utf8.count <= 240, "\(id.prefix(20)): \(name.utf8.count) bytes")
            #expect(name.hasSuffix(".md") && !name.hasPrefix(".") && !name.contains("/"), "\(name)")
            #expect(name != "index.json")
        }
        let hash = String(SHA256.hex(Array(long.utf8)).prefix(16))
        #expect(names[9] == String(repeating: "q", count: 240 - 20) + "-\(hash).md")
        #expect(OutputWriter.fileNames(for: ids) == names, "the same ids, the same names")
    }

    /// Two ids Swift calls equal but the store keeps apart (`é` as one code point, and as `e` and an
    /// accent) are two items: they get two files, not one written twice.
    @Test func idsAreToldApartByTheirBytes() {
        let names = OutputWriter.fileNames(for: ["x-caf\u{E9}", "x-cafe\u{301}", "x-caf\u{E9}"])
        #expect(names == ["x-caf-.md", "x-cafe-.md", "x-caf-.md"])
    }

    /// An id too long for a file name no longer stops outputs and the index being written (which
    /// failed with 74 on every tick), and ids Swift calls equal but the store keeps apart get a
    /// file each (one overwrote the other).
    @Test func outputsOfLongIdsAreWritten() throws {
        let workspace = try TemporaryWorkspace()
        let ids = [
            String(repeating: "a", count: 240), String(repeating: "b", count: 1_000), "caf\u{E9}",
            "cafe\u{301}",
        ]
        var requests: [RequestRecord] = []
        var results: [String: ResultRecord] = [:]
        for (position, id) in ids.enumerated() {
            let request = StoreTests.request(id, run: "r1", position: position)
            requests.append(request)
            results[request.id] = ResultRecord(
                requestId: request.id, runId: "r1", text: "Answer \(position).", finishReason: "end_turn",
                model: "m", fromCache: false, ledgerId: nil, inputTokens: 1, outputTokens: 1, dollars: 0,
                createdAt: Date())
        }
        let writer = OutputWriter(directory: workspace.root.appendingPathComponent("out/j"))
        #expect(try writer.write(job: "j", runID: "r1", requests: requests, results: results).rewritten == 4)
        let index = try JSONDecoder().decode(
            OutputWriter.Index.self, from: Data(try #require(workspace.read("out/j/index.json")).utf8))
        #expect(index.items.map { Array($0.id.utf8) } == ids.map { Array($0.utf8) })
        #expect(Set(index.items.compactMap(\.file)).count == 4)
        for (position, entry) in index.items.enumerated() {
            let file = try #require(entry.file)
            #expect(workspace.read("out/j/\(file)") == "Answer \(position).\n")
        }
    }
}
