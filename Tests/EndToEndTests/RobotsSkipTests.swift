import Foundation
import OffpeakTestSupport
import Testing

/// `robots: skip` (issue 46, item 5): a research job whose items list a page robots.txt forbids
/// skips that item (never requested, not asked), reports it in the run's line, `status` and
/// index.json as skipped, and exits 0, day after day; without it the item fails (exit 69), as the
/// daily research test shows.
@Suite(.ownThreads) struct RobotsSkipTests {
    @Test func anItemWhosePageRobotsTxtForbidsIsSkippedAndTheRunCompletes() throws {
        let sim = try SimProcess()
        let site = try LocalSite()
        let before = Date() - 86_400
        try site.write("robots.txt", "User-agent: *\nDisallow: /private/\n", modified: before)
        try site.write("private/notes.txt", "The staff room code is 4711.", modified: before)
        try site.write("prices.txt", "Tea is 3 euros a cup.", modified: before)
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\n")
        try workspace.write(
            "jobs/market.yaml",
            """
            kind: research
            template: "What should a visitor know? {{item}}"
            robots: skip
            items:
              - {id: prices, item: "Prices today.", sources: ["\(site.url)/prices.txt"]}
              - {id: staff, item: "Staff notes.", sources: ["\(site.url)/private/notes.txt"]}
            """)
        let why = "source \(site.url)/private/notes.txt is disallowed by its site's robots.txt for offpeak"
        let skipped = "1 item skipped (first: \(why))"

        let first = try workspace.offpeak(["run", "market"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(
            first.stdout == """
                job market: 1 of 2 items answered (1 now); \(skipped)
                outputs: out/market/
                cost: $0.000303 for 1 call, 31 input and 14 output tokens (naive $0.000303, saved $0.00)

                """)
        #expect(try sim.stats()["calls"] as? Int == 1)
        #expect(try site.requests() == ["GET /prices.txt 200", "GET /robots.txt 200"], "never requested")
        let index = try #require(
            try JSONSerialization.jsonObject(with: Data((workspace.read("out/market/index.json") ?? "").utf8))
                as? [String: Any])
        let items = try #require(index["items"] as? [[String: Any]])
        #expect(items.map { $0["id"] as? String } == ["prices", "staff"])
        #expect(items.map { $0["state"] as? String } == ["done", "skipped"])
        #expect(items.map { $0["error"] as? String } == [nil, why])
        #expect(workspace.read("out/market/staff.md") == nil)

        let status =
            try JSONSerialization.jsonObject(
                with: Data(try workspace.offpeak(["status", "--json"]).stdout.utf8)) as? [String: Any]
        let run = try #require((status?["runs"] as? [[String: Any]])?.first)
        #expect(run["state"] as? String == "completed")
        #expect(run["reason"] as? String == skipped)

        // The next day's run skips it again, still exit 0; the answered page comes from the cache.
        let again = try workspace.offpeak(["run", "market"])
        #expect(again.status == 0)
        #expect(
            again.stdout == """
                job market: 1 of 2 items answered (1 now); \(skipped)
                outputs: out/market/
                cost: $0.00 for 0 calls, 0 input and 0 output tokens (naive $0.000303, saved $0.000303)

                """)
    }
}
