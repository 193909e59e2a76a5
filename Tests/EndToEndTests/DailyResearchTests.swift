import Foundation
import OffpeakTestSupport
import Testing

/// Issue 24's must-show as a user lives it: a daily research job on a schedule, over a plain web
/// site served on loopback (`LocalSite`: pages, an RSS feed and a robots.txt, from Python's
/// `http.server`, which revalidates by `Last-Modified` and sends no ETag), ticked once a day for 5
/// days by the built `offpeak tick` on a clock the test moves (`--now`), with the job's default
/// `cache_ttl` of 24 h passing between days. Each day's tick line is compared whole, and so is what
/// the site was asked for.
@Suite(.ownThreads) struct DailyResearchTests {
    static let days = ["2026-06-01", "2026-06-02", "2026-06-03", "2026-06-04", "2026-06-05"]

    /// Midnight UTC of day `day` (0-based) of `days`, plus `hours`.
    static func date(day: Int, hours: Double = 0) -> Date {
        Date(timeIntervalSince1970: 1_780_272_000 + Double(day) * 86_400 + hours * 3600)
    }

    static func feed(_ site: LocalSite, entries: [(id: String, title: String, page: String)]) -> String {
        let items = entries.map {
            "<item><guid>\($0.id)</guid><title>\($0.title)</title><link>\(site.url)/\($0.page)</link></item>"
        }
        return """
            <?xml version="1.0"?>
            <rss version="2.0"><channel><title>Harbour news</title>
            \(items.reversed().joined(separator: "\n"))
            </channel></rss>
            """
    }

    @Test func aDailyJobPaysOnlyForWhatChangedOnItsSite() throws {
        #expect(Self.date(day: 0) == ISO8601DateFormatter().date(from: "2026-06-01T00:00:00Z"))
        let sim = try SimProcess()
        let site = try LocalSite()
        let before = Self.date(day: -10)
        try site.write("robots.txt", "User-agent: *\nDisallow: /private/\n", modified: before)
        try site.write("private/notes.txt", "The staff room code is 4711.", modified: before)
        try site.write("prices.txt", "Tea is 3 euros a cup.", modified: before)
        try site.write(
            "index.html", "<html><body><h1>Harbour market</h1><p>Open from 8 to 18.</p></body></html>",
            modified: before)
        try site.write("ferry.html", "<p>The ferry leaves at every full hour.</p>", modified: before)
        try site.write(
            "feed.xml", Self.feed(site, entries: [("n1", "The ferry runs again", "ferry.html")]),
            modified: before)

        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\n")
        try workspace.write(
            "jobs/morning.yaml",
            """
            kind: research
            template: "What should a visitor know? {{item}}"
            items:
              - {id: prices, item: "Prices today.", sources: ["\(site.url)/prices.txt"]}
              - {id: market, item: "Opening hours.", sources: ["\(site.url)/index.html"]}
              - {id: staff, item: "Staff notes.", sources: ["\(site.url)/private/notes.txt"]}
            feeds: ["\(site.url)/feed.xml"]
            digest: {template: "Write three lines on what changed:\\n{{changes}}", max_tokens: 300}
            schedule: "0 7 * * *"
            """)
        var calls = 0
        /// One day's tick at 07:00: what it printed and how it exited, the calls the sim answered,
        /// and what the site was asked for.
        func tick(_ day: Int) throws -> (line: String, status: Int32, calls: Int, site: [String]) {
            let result = try workspace.offpeak(["tick", "--now", Self.days[day] + "T07:00:00Z"])
            #expect(result.stderr == "", "day \(day + 1)")
            let total = try #require(try sim.stats()["calls"] as? Int)
            defer { calls = total }
            return (result.stdout, result.status, total - calls, try site.requests())
        }
        let refused =
            "1 failed (first: source \(site.url)/private/notes.txt is disallowed by its site's robots.txt for offpeak)"

        // The evening before, the job is seen: its first slot is the next 07:00.
        let seen = try workspace.offpeak(["tick", "--now", "2026-05-31T20:00:00Z"])
        #expect(seen.stdout == "nothing to do\n" && seen.status == 0)

        // Day 1: two pages and the feed's one entry are asked, and the digest over them: 4 calls.
        // robots.txt forbids the staff notes, which fail unfetched (so the tick exits 69).
        let first = try tick(0)
        #expect(first.line == "morning [schedule]: job morning: 3 of 4 items answered (3 now), \(refused)\n")
        #expect(first.status == 69)
        #expect(first.calls == 4)
        #expect(
            first.site == [
                "GET /feed.xml 200", "GET /ferry.html 200", "GET /index.html 200", "GET /prices.txt 200",
                "GET /robots.txt 200",
            ])
        let digest = try #require(workspace.read("out/morning/digest.md"))
        #expect(
            try Self.changes(workspace) == ["market": "new", "n1": "new", "prices": "new", "staff": "new"])

        // Day 2: nothing changed and every TTL passed: each document is revalidated (a 304), no
        // call is made, no digest is asked for and the last one stays.
        let second = try tick(1)
        #expect(second.line == "morning [schedule]: job morning: 2 of 3 items answered (2 now), \(refused)\n")
        #expect(second.calls == 0)
        #expect(
            second.site == [
                "GET /feed.xml 304", "GET /index.html 304", "GET /prices.txt 304", "GET /robots.txt 304",
            ])
        #expect(workspace.read("out/morning/digest.md") == digest)
        // The feed's entry answered on day 1 stays listed, as new to the run that answered it.
        #expect(
            try Self.changes(workspace) == [
                "market": "unchanged", "n1": "new", "prices": "unchanged", "staff": "unchanged",
            ])

        // Day 3: the prices changed overnight: that item is asked again, and the digest: 2 calls.
        try site.write("prices.txt", "Tea is 4 euros a cup.", modified: Self.date(day: 1, hours: 20))
        let third = try tick(2)
        #expect(third.line == second.line)
        #expect(third.calls == 2)
        #expect(
            third.site == [
                "GET /feed.xml 304", "GET /index.html 304", "GET /prices.txt 200", "GET /robots.txt 304",
            ])
        #expect(
            try Self.changes(workspace) == [
                "market": "unchanged", "n1": "new", "prices": "changed", "staff": "unchanged",
            ])

        // Day 4: a new feed entry is asked once, with its page, and the digest; the old entry is
        // never asked again.
        try site.write(
            "bridge.html", "<p>The old bridge closes for repairs in July.</p>", modified: Self.date(day: 2))
        try site.write(
            "feed.xml",
            Self.feed(
                site,
                entries: [
                    ("n1", "The ferry runs again", "ferry.html"), ("n2", "Bridge works", "bridge.html"),
                ]),
            modified: Self.date(day: 2, hours: 18))
        let fourth = try tick(3)
        #expect(fourth.line == "morning [schedule]: job morning: 3 of 4 items answered (3 now), \(refused)\n")
        #expect(fourth.calls == 2)
        #expect(
            fourth.site == [
                "GET /bridge.html 200", "GET /feed.xml 200", "GET /index.html 304", "GET /prices.txt 304",
                "GET /robots.txt 304",
            ])
        #expect(
            try Self.changes(workspace) == [
                "market": "unchanged", "n1": "new", "n2": "new", "prices": "unchanged", "staff": "unchanged",
            ])
        let newsDigest = try #require(workspace.read("out/morning/digest.md"))

        // Day 5: quiet again: no call, and the digest of day 4 stays.
        let fifth = try tick(4)
        #expect(fifth.line == second.line)
        #expect(fifth.calls == 0)
        #expect(fifth.site.allSatisfy { $0.hasSuffix(" 304") } && fifth.site.count == 4)
        #expect(workspace.read("out/morning/digest.md") == newsDigest)
        #expect(workspace.read("out/morning/n1.md") != nil && workspace.read("out/morning/n2.md") != nil)

        // What it cost, day by day, as `offpeak costs --by day` shows the ledger: the quiet days' reuses
        // are cache hits with what they saved.
        let costs = try workspace.offpeak(["costs", "--by", "day", "--json"])
        #expect(costs.status == 0, "\(costs.stderr)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(costs.stdout.utf8)) as? [String: Any])
        let byDay = try #require(report["lines"] as? [[String: Any]]).reversed()
        let spends = byDay.compactMap { $0["spend"] as? [String: Any] }
        #expect(byDay.map { $0["key"] as? String } == Self.days.map(Optional.some))
        #expect(spends.map { $0["calls"] as? Int } == [4, 0, 2, 2, 0])
        #expect(
            spends.map { ($0["naive_dollars"] as? Double ?? 0) > ($0["dollars"] as? Double ?? 0) } == [
                false, true, true, true, true,
            ], "from day 2 on, what went unasked is saved")
    }

    /// Each item's `change` in the job's `index.json`.
    static func changes(_ workspace: TemporaryWorkspace) throws -> [String: String] {
        let text = try #require(workspace.read("out/morning/index.json"))
        let index = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let items = try #require(index["items"] as? [[String: Any]])
        return Dictionary(
            items.compactMap { item in (item["id"] as? String).map { ($0, item["change"] as? String ?? "-") }
            },
            uniquingKeysWith: { first, _ in first })
    }
}
