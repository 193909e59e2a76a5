import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Issue 24's must-show: a daily research job over a site served on loopback (the sim's pages, a
/// feed and a robots.txt) through 5 days. `cache_ttl: 0s` puts every answer and source past its
/// TTL by the next day, as a day's wait would.
@Suite(.ownThreads) struct ResearchDaysTests {
    @Test func fiveDaysPayOnlyForWhatChanged() throws {
        let sim = try SimProcess()
        try sim.setSource("robots.txt", content: "User-agent: *\nDisallow: /sources/private\n")
        try sim.setSource("private", content: "Members only.")
        for page in 1...4 { try sim.setSource("site-\(page)", content: "Page \(page) is as it was.") }
        try FeedRunTests.feed(sim, entries: [1, 2])
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\nhttp: {max_retries: 1}\n")
        let pages = (1...4).map {
            "  - {id: site-\($0), item: \"What is new?\", sources: [\"\(sim.url)/sources/site-\($0)\"]}"
        }
        try workspace.write(
            "jobs/news.yaml",
            """
            kind: research
            template: "Summarize this: {{item}}"
            items:
            \(pages.joined(separator: "\n"))
              - {id: secret, item: "What is inside?", sources: ["\(sim.url)/sources/private"]}
            feeds: ["\(sim.url)/sources/feed"]
            digest: {template: "What changed today?\\n{{changes}}", max_tokens: 200}
            cache_ttl: 0s
            batching: off
            """)
        func day() throws -> (calls: Int, digest: Bool) {
            let outcome = try CachedRunTests.run(workspace, job: "news")
            let requests = try workspace.openStore().runs.requests(runID: outcome.run.id)
            return (outcome.spend.calls, requests.contains { $0.itemId == "#digest" })
        }
        // Day 1: 4 pages and 2 feed entries, and the digest over them; robots.txt forbids the
        // secret page, which fails its item unfetched.
        #expect(try day() == (7, true))
        let secret = try #require(try Self.entry(workspace, "secret"))
        #expect(secret.state == "failed")
        #expect(secret.error?.contains("disallowed by its site's robots.txt") == true)
        let sources = try #require(try sim.stats()["sources"] as? [String: Int])
        #expect(sources["fetches"] == 7, "the feed, 4 pages and 2 entry pages; never the secret one")
        let digest = try #require(workspace.read("out/news/digest.md"))

        // Day 2: nothing changed, every TTL passed: no call, no digest call, the digest stays.
        #expect(try day() == (0, false))
        #expect(workspace.read("out/news/digest.md") == digest)

        // Day 3: two pages changed: two item calls and the digest.
        try sim.setSource("site-2", content: "Page 2 changed its mind.")
        try sim.setSource("site-4", content: "Page 4 moved on.")
        #expect(try day() == (3, true))
        #expect(try Self.entry(workspace, "site-2")?.change == .changed)
        #expect(try Self.entry(workspace, "site-1")?.change == .unchanged)

        // Day 4: a new feed entry is asked once; the old ones never again.
        try FeedRunTests.feed(sim, entries: [1, 2, 3])
        #expect(try day() == (2, true))
        #expect(try Self.entry(workspace, "entry-3")?.change == .new)
        let index = try ResearchReuseTests.index(workspace, job: "news")
        let old = try #require(
            try Self.entry(workspace, "entry-1"), "still listed: its file is in the folder")
        #expect(old.run != index.run, "answered by an earlier run, not asked again")

        // Day 5: quiet again.
        #expect(try day() == (0, false))
        #expect((try sim.stats()["calls"] as? Int) == 12)
    }

    static func entry(_ workspace: TemporaryWorkspace, _ id: String) throws -> OutputWriter.IndexEntry? {
        try ResearchReuseTests.index(workspace, job: "news").items.first { $0.id == id }
    }
}
