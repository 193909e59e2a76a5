import Foundation
import Logging
import OffpeakTestSupport
import Synchronization
import Testing

@testable import Offpeak

/// A `SourceCache` in memory: each copy with the time it stops being fresh, and every call seen.
final class MemorySourceCache: SourceCache {
    struct Entry {
        var source: CachedSource
        var expires: Date
    }

    private let entries = Mutex<[String: Entry]>([:])
    private let calls = Mutex<[String]>([])

    func source(url: String, now: Date) throws(OffpeakError) -> (source: CachedSource, fresh: Bool)? {
        entries.withLock { $0[url] }.map { ($0.source, now < $0.expires) }
    }

    func save(source: CachedSource, job: String?, ttl: TimeInterval, keep: Bool, now: Date)
        throws(OffpeakError)
    {
        entries.withLock { $0[source.url] = Entry(source: source, expires: now + ttl) }
        calls.withLock { $0.append("save \(source.url) \(job ?? "-")") }
    }

    func refresh(sourceURL: String, ttl: TimeInterval, now: Date) throws(OffpeakError) {
        entries.withLock { $0[sourceURL]?.expires = now + ttl }
        calls.withLock { $0.append("refresh \(sourceURL)") }
    }

    func entry(_ url: String) -> Entry? { entries.withLock { $0[url] } }
    var log: [String] { calls.withLock { $0 } }
}

@Suite(.ownThreads) struct ResearchSourcesTests {
    let start = Date(timeIntervalSince1970: 1_700_000_000)
    let cache = MemorySourceCache()

    func sources(fetcher: SourceFetcher = SourceFetcher(client: HTTPClient(), connectTimeout: 5, timeout: 10))
        -> ResearchSources
    {
        ResearchSources(
            cache: cache, fetcher: fetcher, ttl: 3600, job: "digest",
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    func sourceStats(_ sim: SimProcess) throws -> [String: Int] {
        try #require(try sim.stats()["sources"] as? [String: Int])
    }

    @Test func fetchesSavesAndRendersInOrder() throws {
        let sim = try SimProcess()
        try SimSources.set(sim, name: "one", content: "First text.")
        try SimSources.set(sim, name: "two", content: "Second text.")
        let urls = [sim.url + "/sources/one", sim.url + "/sources/two", sim.url + "/sources/one"]
        let context = try sources().context(for: urls, now: start)
        let expected = """
            <source url="\(urls[0])">
            First text.
            </source>

            <source url="\(urls[1])">
            Second text.
            </source>
            """
        #expect(context.text == expected)
        guard case .ready(_, let citations) = context else { return }
        #expect(citations.map(\.url) == Array(urls.prefix(2)), "a repeated source is cited once")
        #expect(citations.map(\.sha256) == [SHA256.hex("First text."), SHA256.hex("Second text.")])
        #expect(citations.allSatisfy { $0.fetchedAt == start })
        // The site's robots.txt is asked first (the sim has none: a 404, kept as an empty one).
        #expect(
            cache.log == [
                "save \(sim.url)/robots.txt digest", "save \(urls[0]) digest", "save \(urls[1]) digest",
            ])
        #expect(cache.entry(urls[0])?.expires == start + 3420, "an hour's TTL less a twentieth")
        #expect(try sources().context(for: [], now: start) == .ready("", citations: []))
    }

    /// A copy is fresh a little less than the job's TTL, so a daily job checks yesterday's copies
    /// whether it runs a second earlier or later than yesterday.
    @Test func aCopyIsFreshALittleLessThanTheTTL() {
        #expect(ResearchSources.freshFor(24 * 3600) == 23 * 3600, "at most an hour less")
        #expect(ResearchSources.freshFor(3600) == 3420, "a twentieth less")
        #expect(ResearchSources.freshFor(0) == 0)
        #expect(RobotsCheck.ttl == 23 * 3600)
    }

    @Test func aFreshCopyMakesNoRequest() throws {
        let sim = try SimProcess()
        let url = sim.url + "/sources/fresh"
        let first = try sources().context(for: [url], now: start)
        #expect(try sourceStats(sim)["fetches"] == 1)
        #expect(try sources().context(for: [url], now: start + 3419) == first)
        #expect(try sourceStats(sim)["fetches"] == 1)
    }

    @Test func aStaleCopyIsRevalidatedAndReplacedWhenItChanged() throws {
        let sim = try SimProcess()
        let url = sim.url + "/sources/stale"
        let first = try sources().context(for: [url], now: start)
        let later = start + 7200
        #expect(try sources().context(for: [url], now: later) == first)
        #expect(try sourceStats(sim) == ["fetches": 2, "not_modified": 1, "robots": 1])
        #expect(cache.log.last == "refresh \(url)")
        #expect(cache.entry(url)?.expires == later + 3420)
        try SimSources.set(sim, name: "stale", content: "Changed.")
        let changed = try sources().context(for: [url], now: later + 7200)
        #expect(changed.text == "<source url=\"\(url)\">\nChanged.\n</source>")
        #expect(cache.entry(url)?.source.text == "Changed.")
    }

    @Test func offlineResearchUsesTheStaleCopy() throws {
        let sim = try SimProcess()
        let url = sim.url + "/sources/offline"
        let first = try sources().context(for: [url], now: start)
        sim.kill()
        #expect(try sources().context(for: [url], now: start + 7200) == first)
        #expect(cache.log == ["save \(sim.url)/robots.txt digest", "save \(url) digest"])
    }

    @Test func aSourceNeverFetchedAndUnreachableMakesTheItemWait() throws {
        let sim = try SimProcess()
        let cached = sim.url + "/sources/cached"
        _ = try sources().context(for: [cached], now: start)
        sim.kill()
        let missing = sim.url + "/sources/missing"
        let context = try sources().context(for: [cached, missing], now: start)
        guard case .waiting(let why) = context else {
            Issue.record("expected .waiting, got \(context)")
            return
        }
        #expect(why.hasPrefix("source \(missing) unreachable: "))
    }

    @Test func sourcesThatCanNeverBeUsedFailTheItem() throws {
        let sim = try SimProcess()
        let cases: [(String, Offpeak.ExitStatus)] = [
            ("/sources/status/404", .dataError), ("/sources/status/503", .unavailable),
            ("/sources/status/429", .unavailable), ("/sources/binary/paper", .dataError),
        ]
        for (path, status) in cases {
            do {
                let context = try sources().context(for: [sim.url + path], now: start)
                Issue.record("expected an error for \(path), got \(context)")
            } catch {
                #expect(error.status == status, "\(path)")
                #expect(error.message.hasPrefix("source \(sim.url + path) "), "\(error)")
            }
        }
        #expect(cache.log == ["save \(sim.url)/robots.txt digest"], "only the site's (missing) robots.txt")
    }

    @Test func longSourcesAreCut() {
        let long = String(repeating: "a", count: ResearchSources.maxCharacters + 10)
        let source = CachedSource(
            url: "https://x.example/?a=1&b=\"2\"", contentType: "text/plain", text: long, fetchedAt: start)
        let rendered = ResearchSources.render(source)
        #expect(rendered.hasPrefix("<source url=\"https://x.example/?a=1&amp;b=&quot;2&quot;\">\naaa"))
        let kept = String(repeating: "a", count: ResearchSources.maxCharacters)
        #expect(rendered.contains("\n\(kept)\n[truncated") && !rendered.contains(kept + "a"))
        #expect(rendered.hasSuffix("[truncated: the source continues past 24000 characters]\n</source>"))
    }
}
