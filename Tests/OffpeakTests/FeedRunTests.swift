import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Issue 24, item 2, through real runs against the sim: each new feed entry is asked once, oldest
/// first and at most `max_new` a run, with its linked page as its source; an entry answered before
/// is never asked again.
@Suite(.ownThreads) struct FeedRunTests {
    static func feed(_ sim: SimProcess, entries: [Int]) throws {
        let items = entries.map { number in
            """
            <item><guid>entry-\(number)</guid><title>Entry \(number)</title>
            <description>&lt;p&gt;News number \(number).&lt;/p&gt;</description>
            <link>\(sim.url)/sources/page-\(number)</link>
            <pubDate>Mon, 0\(number) Jun 2026 08:00:00 GMT</pubDate></item>
            """
        }
        try sim.setSource(
            "feed",
            content: """
                <?xml version="1.0"?><rss version="2.0"><channel><title>News</title>
                \(items.reversed().joined(separator: "\n"))
                </channel></rss>
                """, contentType: "application/rss+xml")
        for number in entries {
            try sim.setSource("page-\(number)", content: "Page \(number) says \(number) happened.")
        }
    }

    /// A workspace on `sim` whose job `news` reads the sim's feed, 2 new entries a run, one call
    /// an item; `extra` adds spec lines.
    static func workspace(_ sim: SimProcess, extra: String = "") throws -> TemporaryWorkspace {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\nhttp: {max_retries: 1}\n")
        try writeNews(workspace, sim, extra: extra)
        return workspace
    }

    /// Writes the job `news` of `workspace(_:extra:)`.
    static func writeNews(_ workspace: TemporaryWorkspace, _ sim: SimProcess, extra: String = "") throws {
        try workspace.write(
            "jobs/news.yaml",
            """
            kind: research
            template: "Summarize this news: {{item}}"
            feeds: ["\(sim.url)/sources/feed"]
            max_new: 2
            batching: off
            \(extra)
            """)
    }

    /// The entries the index says the latest run answered.
    static func answered(_ workspace: TemporaryWorkspace) throws -> [String] {
        let index = try ResearchReuseTests.index(workspace, job: "news")
        return index.items.filter { $0.state == "done" && $0.run == index.run }.map(\.id)
    }

    /// Issue 46, item 4: the output folder holds every entry ever answered, and so does its index,
    /// each entry with the run that answered it and its file, the same name from run to run; the
    /// folder written again by `offpeak outputs` is the same, byte for byte.
    @Test func theIndexListsEveryEntryTheFolderHoldsWithItsRun() throws {
        let sim = try SimProcess()
        try Self.feed(sim, entries: [1, 2, 3])
        let workspace = try Self.workspace(sim)
        var runs: [String] = []
        for entries in [[1, 2, 3], [1, 2, 3], [2, 3, 4, 5]] {
            try Self.feed(sim, entries: entries)
            let outcome = try CachedRunTests.run(workspace, job: "news")
            #expect(outcome.status == .ok, "\(outcome.message)")
            runs.append(outcome.run.id)
        }
        let index = try ResearchReuseTests.index(workspace, job: "news")
        #expect(index.run == runs[2])
        #expect(index.items.map(\.id) == ["entry-1", "entry-2", "entry-3", "entry-4", "entry-5"])
        #expect(index.items.map(\.run) == [runs[0], runs[0], runs[1], runs[2], runs[2]])
        #expect(index.items.map(\.state) == Array(repeating: "done", count: 5))
        #expect(index.items.map(\.change) == Array(repeating: .new, count: 5))
        #expect(
            index.items.map(\.file) == ["entry-1.md", "entry-2.md", "entry-3.md", "entry-4.md", "entry-5.md"])
        let files = try FileManager.default.contentsOfDirectory(
            atPath: workspace.root.appendingPathComponent("out/news").path)
        #expect(Set(files) == Set(index.items.compactMap(\.file) + ["index.json"]), "the index is the folder")
        #expect(
            index.items.map { $0.sources?.map(\.url) }
                == (1...5).map { [sim.url + "/sources/page-\($0)"] })

        // Written again from the store, elsewhere: the same folder.
        let before = workspace.snapshot("out/news")
        let store = try workspace.openStore()
        let rewritten = try OutputRewrite.rewrite(
            store: store, workspace: Workspace(root: workspace.root), job: "news", runID: nil, folder: "again"
        )
        #expect(rewritten.files == 5)
        #expect(workspace.snapshot("again") == before)
    }

    @Test func newEntriesAreAskedOnceOldestFirstAtMostMaxNewARun() throws {
        let sim = try SimProcess()
        try Self.feed(sim, entries: [1, 2, 3])
        let workspace = try Self.workspace(sim)
        let first = try CachedRunTests.run(workspace, job: "news")
        #expect(first.status == .ok, "\(first.message)")
        #expect(first.spend.calls == 2)
        #expect(try Self.answered(workspace) == ["entry-1", "entry-2"], "the oldest two")
        let store = try workspace.openStore()
        let request = try #require(
            try store.runs.requests(runID: first.run.id).first { $0.itemId == "entry-1" })
        let prompt = try #require(try request.completionRequest().messages.first?.content)
        #expect(prompt.contains("Page 1 says 1 happened."), "its linked page is its source")
        #expect(prompt.contains("Entry 1\n\nNews number 1."), "{{item}} is its title and summary")

        let second = try CachedRunTests.run(workspace, job: "news")
        #expect(second.spend.calls == 1)
        #expect(try Self.answered(workspace) == ["entry-3"], "the one that waited")

        let quiet = try CachedRunTests.run(workspace, job: "news")
        #expect(quiet.status == .ok, "\(quiet.message)")
        #expect(quiet.spend.calls == 0, "no new entry: nothing asked")

        try Self.feed(sim, entries: [1, 2, 3, 4])
        let fourth = try CachedRunTests.run(workspace, job: "news")
        #expect(fourth.spend.calls == 1)
        #expect(try Self.answered(workspace) == ["entry-4"], "old entries are never asked again")
        #expect((try sim.stats()["calls"] as? Int) == 4)
    }

    /// A busy feed keeps only its latest entries: one taken into a run that a budget stopped stays in
    /// that run after it left the feed, and is answered when the run goes on; nothing is dropped.
    @Test func anEntryTakenIntoAnUnfinishedRunStaysAfterItLeavesTheFeed() throws {
        let sim = try SimProcess()
        try Self.feed(sim, entries: [1, 2])
        let workspace = try Self.workspace(sim, extra: "budget: {max_calls: 1}")
        let first = try CachedRunTests.run(workspace, job: "news")
        #expect(first.spend.calls == 1)
        #expect(try Self.answered(workspace) == ["entry-1"])
        #expect(first.run.state != .completed, "entry-2 is still to answer")

        try Self.feed(sim, entries: [3, 4])
        try Self.writeNews(workspace, sim, extra: "budget: {max_calls: 10}")
        let second = try CachedRunTests.run(workspace, job: "news")
        #expect(second.message == "job news: 3 of 3 items answered (2 now)", "nothing dropped")
        #expect(second.run.id == first.run.id, "the same run goes on")
        #expect(second.spend.calls == 3, "the run's: entry-1, then entry-2 and one new entry (max_new 2)")
        #expect(try Self.answered(workspace) == ["entry-1", "entry-2", "entry-3"])
        #expect(try ResearchReuseTests.index(workspace, job: "news").items.count == 3, "each once")
        let third = try CachedRunTests.run(workspace, job: "news")
        #expect(third.spend.calls == 1)
        #expect(try Self.answered(workspace) == ["entry-4"])
    }

    /// An estimate reads no feed (it sends and fetches nothing) and says so.
    @Test func anEstimateSaysItCountsNoFeedEntry() throws {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\n")
        try workspace.write(
            "jobs/news.yaml",
            """
            kind: research
            template: "Summarize this news: {{item}}"
            feeds: ["http://127.0.0.1:9/feed"]
            max_new: 5
            digest: {template: "{{changes}}"}
            """)
        let context = try WorkspaceContext(
            workspace: Workspace(root: workspace.root), environment: try workspace.environment(),
            logger: Logger(label: "test"))
        let estimate = try context.estimate(try context.loadJob("news"))
        #expect(estimate.items == 0)
        #expect(
            estimate.notes == [
                "feeds are not read by an estimate: their new entries, at most 5 a run (max_new), are not "
                    + "counted, nor the digest over them"
            ])
    }

    @Test func aFeedThatIsNotRSSOrAtomFailsNamingIt() throws {
        let sim = try SimProcess()
        try sim.setSource("feed", content: "<html><body>not a feed</body></html>", contentType: "text/xml")
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\n")
        try workspace.write(
            "jobs/news.yaml",
            "kind: research\ntemplate: '{{item}}'\nfeeds: [\"\(sim.url)/sources/feed\"]\n")
        #expect {
            try CachedRunTests.run(workspace, job: "news")
        } throws: { error in
            guard let error = error as? OffpeakError else { return false }
            return error.status == .dataError
                && error.description.hasPrefix("feed \(sim.url)/sources/feed is not RSS or Atom")
        }
    }
}
