import Foundation
import Logging
import Synchronization

/// Whether a site's robots.txt lets offpeak fetch a URL, read from the site as RFC 9309 says and
/// kept in the `SourceCache` like a source, under its own URL and for a day (`ttl`), whatever the
/// job's `cache_ttl`.
///
/// By the answer to `GET scheme://host[:port]/robots.txt` (redirects followed):
/// - `2xx`: its rules (`RobotsTxt`), cached; a stale copy is revalidated with its validators;
/// - `4xx` but `429`: there is none, so everything is allowed; remembered as an empty file;
///   a body that is not text, or too large, counts the same;
/// - `5xx`, `429` or no answer: the stale cached copy while there is one, else the site counts as
///   unreachable (the item waits, and is tried again, as for a page that cannot be reached).
///
/// One robots.txt per site per run: the first source of a site reads it (the others of that
/// site wait for it), the rest use what it found.
struct RobotsCheck: Sendable {
    /// A day, as RFC 9309 suggests for a cached robots.txt, less `ResearchSources.freshFor`'s
    /// margin, so a daily job reads it anew each day.
    static let ttl: TimeInterval = ResearchSources.freshFor(24 * 3600)

    let cache: any SourceCache
    let fetcher: SourceFetcher
    let job: String?
    /// Keeps the copies it saves past their TTL (`SourceCache.save(…keep:…)`).
    let keep: Bool
    let logger: Logger
    let cancellation: CancellationFlag?
    private let found = SiteRules()

    init(
        cache: any SourceCache, fetcher: SourceFetcher, job: String?, keep: Bool, logger: Logger,
        cancellation: CancellationFlag?
    ) {
        self.cache = cache
        self.fetcher = fetcher
        self.job = job
        self.keep = keep
        self.logger = logger
        self.cancellation = cancellation
    }

    /// Why offpeak may not fetch `url` now, or `nil` when it may: `.disallowed` when the site's
    /// robots.txt forbids it, `.unreachable` when that robots.txt cannot be read.
    /// - Throws: cache errors.
    func refusal(for url: String, now: Date) throws(OffpeakError) -> SourceError? {
        // Not an http(s) URL with a host: no site to ask; the request fails on its own.
        guard let origin = SourceFetcher.origin(of: url) else { return nil }
        let rules = try found.rules(for: origin) { () throws(OffpeakError) in try read(origin, now: now) }
        switch rules {
        case .success(let robots): return robots.allows(url) ? nil : .disallowed(fetcher.redactor.redact(url))
        case .failure(let why):
            return .unreachable(fetcher.redactor.redact(url), "its site's robots.txt \(why.reason)")
        }
    }

    /// The rules `origin`'s robots.txt sets for offpeak, or why they cannot be had (after "its
    /// site's robots.txt").
    private func read(_ origin: String, now: Date) throws(OffpeakError) -> Result<RobotsTxt, Unreadable> {
        let url = origin + "/robots.txt"
        let cached = try cache.source(url: url, now: now)
        if let cached, cached.fresh { return .success(RobotsTxt(cached.source.text)) }
        let outcome: FetchOutcome
        do {
            outcome = try fetcher.fetch(
                url, etag: cached?.source.etag, lastModified: cached?.source.lastModified, now: now,
                cancellation: cancellation, asSent: true)
        } catch {
            switch error {
            case .http(_, let status, _) where (400..<500).contains(status) && status != 429:
                outcome = .fetched(
                    CachedSource(url: url, contentType: "text/plain", text: "", fetchedAt: now))
            case .unsupportedType, .notText, .tooLarge:
                logger.warning("\(error): reading it as no robots.txt")
                outcome = .fetched(
                    CachedSource(url: url, contentType: "text/plain", text: "", fetchedAt: now))
            default:
                if let cached {
                    let age = Int(now.timeIntervalSince(cached.source.fetchedAt) / 3600)
                    logger.warning("\(error); using the robots.txt cached \(age) h ago")
                    return .success(RobotsTxt(cached.source.text))
                }
                if case .http(_, let status, _) = error {
                    return .failure(Unreadable("answered HTTP \(status)"))
                }
                if case .unreachable(_, let why) = error {
                    return .failure(Unreadable("could not be read: \(why)"))
                }
                return .failure(Unreadable("could not be read: \(error)"))
            }
        }
        switch outcome {
        case .notModified:
            try cache.refresh(sourceURL: url, ttl: Self.ttl, now: now)
            return .success(RobotsTxt(cached?.source.text ?? ""))
        case .fetched(let source):
            try cache.save(source: source, job: job, ttl: Self.ttl, keep: keep, now: now)
            logger.debug("fetched \(fetcher.redactor.redact(url)) (\(source.text.utf8.count) bytes)")
            return .success(RobotsTxt(source.text))
        }
    }
}

/// Why a robots.txt cannot be had, said after "its site's robots.txt".
private struct Unreadable: Error, Equatable {
    var reason: String

    init(_ reason: String) {
        self.reason = reason
    }
}

/// The robots.txt rules found for each site during one run, each read at most once even when
/// several threads ask for the same site at the same time.
private final class SiteRules: Sendable {
    /// One slot per site, created under `slots`' lock and filled under its own, so a site being
    /// read makes only the threads that want that site wait.
    private final class Slot: Sendable {
        let rules = Mutex<Result<RobotsTxt, Unreadable>?>(nil)
    }

    private let slots = Mutex<[String: Slot]>([:])

    func rules(
        for origin: String, reading read: () throws(OffpeakError) -> Result<RobotsTxt, Unreadable>
    ) throws(OffpeakError) -> Result<RobotsTxt, Unreadable> {
        let slot = slots.withLock { slots in
            if let slot = slots[origin] { return slot }
            let slot = Slot()
            slots[origin] = slot
            return slot
        }
        return try slot.rules.withLock { known throws(OffpeakError) in
            if let known { return known }
            let rules = try read()
            known = rules
            return rules
        }
    }
}
