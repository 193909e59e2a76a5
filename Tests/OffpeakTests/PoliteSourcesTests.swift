import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Issue 24 item 6, a polite fetcher, against the real `offpeak-sim`: robots.txt asked first and
/// cached for a day, redirects followed hop by hop and a moved page's new URL remembered, and
/// nothing fetched while the job's conditions do not hold.
@Suite(.ownThreads) struct PoliteSourcesTests {
    let start = Date(timeIntervalSince1970: 1_700_000_000)
    let cache = MemorySourceCache()

    func sources() -> ResearchSources {
        ResearchSources(
            cache: cache, fetcher: SourceFetcher(client: HTTPClient(), connectTimeout: 5, timeout: 10),
            ttl: 3600, job: "digest",
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    func sourceStats(_ sim: SimProcess) throws -> [String: Int] {
        try #require(try sim.stats()["sources"] as? [String: Int])
    }

    /// The error a context must throw.
    func failure(_ urls: [String], at now: Date) -> OffpeakError? {
        do {
            let context = try sources().context(for: urls, now: now)
            Issue.record("expected an error, got \(context)")
            return nil
        } catch {
            return error
        }
    }

    static let robots = """
        User-agent: *
        Allow: /

        User-agent: offpeak
        Disallow: /sources/secret
        Disallow: /sources/zeta
        """

    @Test func aSourceRobotsTxtForbidsFailsTheItemAndIsNeverRequested() throws {
        let sim = try SimProcess()
        try SimSources.set(sim, name: "robots.txt", content: Self.robots)
        let secret = sim.url + "/sources/secret"
        let error = try #require(failure([secret], at: start))
        #expect(error.status == .dataError)
        #expect(error.message == "source \(secret) is disallowed by its site's robots.txt for offpeak")
        #expect(
            try sourceStats(sim) == ["fetches": 0, "not_modified": 0, "robots": 1],
            "the page was not asked for")
        let open = sim.url + "/sources/open"
        #expect(try sources().context(for: [open], now: start) != .ready(""))
        #expect(
            try sourceStats(sim) == ["fetches": 1, "not_modified": 0, "robots": 1], "robots.txt was cached")
        #expect(cache.entry(sim.url + "/robots.txt")?.expires == start + RobotsCheck.ttl)
    }

    @Test func aStaleCopyOfAPageNowForbiddenFailsTheItem() throws {
        let sim = try SimProcess()
        let secret = sim.url + "/sources/secret"
        _ = try sources().context(for: [secret], now: start)
        try SimSources.set(sim, name: "robots.txt", content: Self.robots)
        let nextDay = start + RobotsCheck.ttl + 60
        #expect(try sources().context(for: [secret], now: start + 60) != .ready(""), "fresh: no request")
        #expect(failure([secret], at: nextDay)?.status == .dataError)
        #expect(try sourceStats(sim)["fetches"] == 1)
    }

    @Test func aRedirectToAForbiddenURLStopsBeforeIt() throws {
        let sim = try SimProcess()
        try SimSources.set(sim, name: "robots.txt", content: Self.robots)
        let error = try #require(failure([sim.url + "/sources/redirect/zeta"], at: start))
        #expect(
            error.message
                == "source \(sim.url)/sources/zeta is disallowed by its site's robots.txt for offpeak")
        #expect(try sourceStats(sim)["fetches"] == 0)
    }

    @Test func aMissingRobotsTxtAllowsEverythingAndIsAskedOncePerSite() throws {
        let sim = try SimProcess()
        let urls = (1...3).map { sim.url + "/sources/page\($0)" }
        let contexts = sources().contexts(for: urls.map { [$0] }, now: start)
        #expect(contexts.allSatisfy { if case .success(.ready) = $0 { true } else { false } })
        #expect(try sourceStats(sim) == ["fetches": 3, "not_modified": 0, "robots": 1])
        #expect(cache.entry(sim.url + "/robots.txt")?.source.text == "")
    }

    @Test func robotsTxtIsKeptForADayThenRevalidated() throws {
        let sim = try SimProcess()
        try SimSources.set(sim, name: "robots.txt", content: Self.robots)
        let url = sim.url + "/sources/kept"
        let first = try sources().context(for: [url], now: start)
        #expect(try sources().context(for: [url], now: start + 7200) == first)
        #expect(try sourceStats(sim) == ["fetches": 2, "not_modified": 1, "robots": 1], "the page only")
        let nextDay = start + RobotsCheck.ttl + 60
        #expect(try sources().context(for: [url], now: nextDay) == first)
        #expect(try sourceStats(sim)["robots"] == 2)
        #expect(cache.log.contains("refresh \(sim.url)/robots.txt"), "a 304: the request was conditional")
    }

    @Test func aRobotsTxtServerErrorMakesTheItemWait() throws {
        let sim = try SimProcess()
        try SimSources.set(sim, name: "robots.txt", content: "down", status: 503)
        let url = sim.url + "/sources/waits"
        let context = try sources().context(for: [url], now: start)
        #expect(context == .waiting("source \(url) unreachable: its site's robots.txt answered HTTP 503"))
        #expect(try sourceStats(sim)["fetches"] == 0)
    }

    /// `robots: skip` (issue 46, item 5): a source robots.txt forbids skips its item instead of
    /// failing it, whether it was never fetched or a copy is cached from before the site forbade it;
    /// never requested either way.
    @Test func withSkipASourceRobotsTxtForbidsSkipsTheItem() throws {
        let sim = try SimProcess()
        // A run's: each reads a site's robots.txt once.
        func skipping() -> ResearchSources {
            var sources = sources()
            sources.skipDisallowed = true
            return sources
        }
        let secret = sim.url + "/sources/secret"
        let open = sim.url + "/sources/open"
        let why = "source \(secret) is disallowed by its site's robots.txt for offpeak"
        try SimSources.set(sim, name: "robots.txt", content: Self.robots)
        #expect(try skipping().context(for: [open, secret], now: start) == .skipped(why))
        #expect(try sourceStats(sim) == ["fetches": 1, "not_modified": 0, "robots": 1], "the open page only")

        // A page cached before its site forbade it: revalidated the next day, skipped unread.
        let beta = sim.url + "/sources/beta"
        _ = try skipping().context(for: [beta], now: start)
        try SimSources.set(sim, name: "robots.txt", content: "User-agent: offpeak\nDisallow: /sources/beta\n")
        let nextDay = start + RobotsCheck.ttl + 60
        #expect(
            try skipping().context(for: [beta], now: nextDay)
                == .skipped("source \(beta) is disallowed by its site's robots.txt for offpeak"))
        #expect(failure([beta], at: nextDay)?.status == .dataError, "without skip it fails, as before")
    }

    @Test func aStaleRobotsTxtIsUsedWhileTheServerCannotAnswer() throws {
        let sim = try SimProcess()
        try SimSources.set(sim, name: "robots.txt", content: Self.robots)
        let url = sim.url + "/sources/steady"
        let first = try sources().context(for: [url], now: start)
        try SimSources.set(sim, name: "robots.txt", content: "down", status: 500)
        let nextDay = start + RobotsCheck.ttl + 60
        #expect(try sources().context(for: [url], now: nextDay) == first)
        #expect(try sourceStats(sim) == ["fetches": 2, "not_modified": 1, "robots": 2])
        let secret = sim.url + "/sources/secret"
        #expect(failure([secret], at: nextDay)?.status == .dataError, "its rules still hold")
    }

    @Test func aMovedPageIsFollowedAndAskedForAtItsNewURLNextTime() throws {
        let sim = try SimProcess()
        let moved = sim.url + "/sources/moved/epsilon"
        let first = try sources().context(for: [moved], now: start)
        guard case .ready(let text, _) = first else {
            Issue.record("expected a context, got \(first)")
            return
        }
        #expect(text.hasPrefix("<source url=\"\(moved)\">\nThis is the research source named epsilon"))
        #expect(cache.entry(moved)?.source.movedTo == sim.url + "/sources/epsilon")
        // The old URL is now forbidden: only a fetcher that goes straight to the new one can check.
        try SimSources.set(sim, name: "robots.txt", content: "User-agent: *\nDisallow: /sources/moved/\n")
        let nextDay = start + RobotsCheck.ttl + 60
        #expect(try sources().context(for: [moved], now: nextDay) == first)
        #expect(try sourceStats(sim)["not_modified"] == 1, "conditional at the new URL")

        let permanent = sim.url + "/sources/moved308/theta"
        _ = try sources().context(for: [permanent], now: start)
        #expect(cache.entry(permanent)?.source.movedTo == sim.url + "/sources/theta")
        let temporary = sim.url + "/sources/redirect/eta"
        _ = try sources().context(for: [temporary], now: start)
        #expect(cache.entry(temporary)?.source.text.contains("named eta") == true)
        #expect(cache.entry(temporary)?.source.movedTo == nil, "a 302 is not remembered")
    }

    @Test func redirectTargetsAndOrigins() {
        #expect(SourceFetcher.target(of: "/b?c=1", from: "https://e.com/a/x") == "https://e.com/b?c=1")
        #expect(SourceFetcher.target(of: "y", from: "https://e.com/a/x") == "https://e.com/a/y")
        #expect(SourceFetcher.target(of: "http://f.org/", from: "https://e.com/") == "http://f.org/")
        #expect(SourceFetcher.target(of: "file:///etc/passwd", from: "https://e.com/") == nil)
        #expect(SourceFetcher.target(of: "ftp://f.org/x", from: "https://e.com/") == nil)
        #expect(SourceFetcher.origin(of: "https://E.com:443/a?b") == "https://e.com")
        #expect(SourceFetcher.origin(of: "http://127.0.0.1:8089/x") == "http://127.0.0.1:8089")
        #expect(SourceFetcher.origin(of: "mailto:a@b.c") == nil)
    }

    /// Item 6's last rule: a job whose conditions do not hold fetches no source (not even a
    /// robots.txt) and is deferred; once they hold, it fetches them.
    @Test func nothingIsFetchedWhileTheJobsConditionsDoNotHold() throws {
        let sim = try SimProcess()
        let workspace = try CachedRunTests.research(sim: sim)
        try workspace.write(
            "jobs/brief.yaml",
            """
            kind: research
            system: Answer from the sources only.
            template: "Question: {{item}}"
            sources: ["\(sim.url)/sources/heat-pumps"]
            items:
              - {id: q1, item: "What do the sources say first?"}
            constraints: {network: unmetered}
            batching: off
            """)
        let sysfs = try SwitchableSysfs("battery-wwan")
        let context = try JobRunnerIntegrationTests.context(workspace)
        func run() throws -> RunOutcome {
            try context.run(
                try context.loadJob("brief"),
                options: JobRunner.Options(gate: context.gate(sysfsRoot: sysfs.root.path)))
        }
        let deferred = try run()
        #expect(deferred.deferred.contains(.unmeteredNetwork), "\(deferred.message)")
        #expect(try sourceStats(sim) == ["fetches": 0, "not_modified": 0], "no source, no robots.txt")
        try sysfs.switchTo("ac-wifi")
        let ran = try run()
        #expect(ran.status == .ok, "\(ran.message)")
        #expect(try sourceStats(sim) == ["fetches": 1, "not_modified": 0, "robots": 1])
    }
}
