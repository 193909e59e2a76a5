import Foundation
import Logging

/// The research context for one item, or why the item has to wait for it.
enum SourceContext: Equatable, Sendable {
    /// The rendered sources, ready to go before the prompt (`""` for no sources), and what each
    /// was (`SourceCitation`), in the same order.
    case ready(String, citations: [SourceCitation] = [])
    /// A source was never fetched and cannot be reached now: `source https://… unreachable: …`.
    /// The item waits (like work deferred for a condition) and is tried again on a later tick; it
    /// has not failed.
    case waiting(String)
    /// A source its site's robots.txt forbids, and the job skips such items (`robots: skip`): the
    /// item is not asked (`source https://… is disallowed by its site's robots.txt for offpeak`).
    case skipped(String)

    /// The rendered sources, when they are ready.
    var text: String? {
        if case .ready(let text, _) = self { text } else { nil }
    }
}

/// Gathers an item's research sources, from the cache where it can and from the network where it
/// must, so repeated runs cost no downloads and research keeps working offline.
///
/// Per URL, in order:
/// - a fresh cached copy is used as it is, with no request;
/// - a stale copy is revalidated with its ETag / Last-Modified: a `304` marks it fresh again
///   (`refresh`), a `200` replaces it (`save`); if the check fails in any way (unreachable, an
///   HTTP error, a changed type) the stale copy is used and a warning logged, since an old copy
///   of a page is more use to research than none, and the next run checks again;
/// - a source never fetched is fetched and saved; if it is unreachable the context is
///   `.waiting`, and any other failure throws (see `context(for:now:)`).
///
/// Every request is a polite one: its site's robots.txt is asked first (`RobotsCheck`), and a URL
/// it forbids is never requested (`.disallowed`, which fails the item even when a stale copy is
/// cached: the site has asked not to be read; or skips it, with `skipDisallowed`); redirects are followed one hop at a time, each
/// hop checked the same way, and a page that moved for good (`301`, `308`) is asked for at its
/// new URL from then on (`CachedSource.movedTo`), while its copy keeps the URL the user wrote.
/// With `offline` set (the job's conditions do not hold) nothing is requested: cached copies are
/// used as they are, fresh or stale, and a source never fetched waits.
///
/// Each source is rendered as `<source url="URL">\nTEXT\n</source>`, sources joined by a blank
/// line, in the order given (repeats dropped). A source's text is cut to its first 24,000
/// characters (`maxCharacters`), with a note saying so: about 6,000 tokens, enough for a long
/// article, while a few huge pages cannot crowd the question out of the prompt.
struct ResearchSources: Sendable {
    static let maxCharacters = 24_000

    let cache: any SourceCache
    let fetcher: SourceFetcher
    let ttl: TimeInterval
    let job: String?
    /// The job reuses unchanged answers: the copies it saves are kept past `ttl`, so the next check
    /// is a conditional request (`SourceCache.save(…keep:…)`).
    let keep: Bool
    let logger: Logger
    let cancellation: CancellationFlag?
    /// Asks each site's robots.txt before any request to it.
    let robots: RobotsCheck
    /// Sources come from the cache only: nothing is requested.
    var offline = false
    /// An item with a source its site's robots.txt forbids is skipped (`SourceContext.skipped`),
    /// not failed (the job's `robots: skip`).
    var skipDisallowed = false

    /// - Parameters:
    ///   - ttl: the job's `cache_ttl`; a fetched or revalidated source stays fresh a little less
    ///     (`freshFor`).
    ///   - job: the job name recorded with saved sources.
    ///   - keep: keep saved copies past `ttl` (the job has `reuse: unchanged`).
    ///   - cancellation: aborts fetches in flight (a stop signal's grace ran out); a source that
    ///     was never fetched then waits, like an unreachable one.
    init(
        cache: any SourceCache, fetcher: SourceFetcher, ttl: TimeInterval, job: String?, keep: Bool = false,
        logger: Logger, cancellation: CancellationFlag? = nil
    ) {
        self.cache = cache
        self.fetcher = fetcher
        self.ttl = Self.freshFor(ttl)
        self.job = job
        self.keep = keep
        self.logger = logger
        self.cancellation = cancellation
        self.robots = RobotsCheck(
            cache: cache, fetcher: fetcher, job: job, keep: keep, logger: logger, cancellation: cancellation)
    }

    /// The rendered context for `urls`, or `.waiting` at the first source that was never fetched
    /// and cannot be reached (the rest are not tried: offline, each would only time out too).
    ///
    /// - Throws: `OffpeakError` when a source never fetched cannot be used, naming the URL:
    ///   `.unavailable` when its server fails (HTTP 5xx, or 429), since the spec may be right and
    ///   the server may recover; `.dataError` otherwise (HTTP 4xx, not text, too large, forbidden
    ///   by its site's robots.txt, cached or not), since the spec names something that will never
    ///   be usable research. Cache errors pass through.
    func context(for urls: [String], now: Date = Date()) throws(OffpeakError) -> SourceContext {
        try Self.assemble(urls) { url throws(OffpeakError) in try source(url, now: now) }
    }

    /// The context of `urls` from each one's copy (`copy`, asked in order, repeats dropped), or
    /// `.waiting` at the first that cannot be had, the rest not asked.
    private static func assemble(
        _ urls: [String], copy: (String) throws(OffpeakError) -> Result<CachedSource, SourceError>
    ) throws(OffpeakError) -> SourceContext {
        var blocks: [String] = []
        var citations: [SourceCitation] = []
        var seen: Set<String> = []
        for url in urls where seen.insert(url).inserted {
            switch try copy(url) {
            case .success(let source):
                blocks.append(render(source))
                citations.append(SourceCitation(source, url: url))
            case .failure(let reason):
                if case .disallowed = reason { return .skipped(reason.description) }
                return .waiting(reason.description)
            }
        }
        return .ready(blocks.joined(separator: "\n\n"), citations: citations)
    }

    /// Sources fetched at once, at most: a job's sources usually sit on different servers.
    static let fetchesAtOnce = 4

    /// The context of each list of `urls` (one list per item), every distinct source fetched once,
    /// `fetchesAtOnce` at a time; an item's context is what `context(for:)` would give it.
    func contexts(for lists: [[String]], now: Date = Date()) -> [Result<SourceContext, OffpeakError>] {
        var distinct: [String] = []
        var seen: Set<String> = []
        for url in lists.joined() where seen.insert(url).inserted { distinct.append(url) }
        let fetched = BoundedThreads.map(distinct.count, width: Self.fetchesAtOnce) {
            [self, distinct] index in
            Result { () throws(OffpeakError) in try source(distinct[index], now: now) }
        }
        let byURL = Dictionary(uniqueKeysWithValues: zip(distinct, fetched))
        return lists.map { urls in
            Result { () throws(OffpeakError) -> SourceContext in
                try Self.assemble(urls) { url throws(OffpeakError) in
                    guard let fetched = byURL[url] else {
                        throw OffpeakError(.software, "source \(url) was not fetched")
                    }
                    return try fetched.get()
                }
            }
        }
    }

    /// The copy of `url` the job reads (a feed), from the cache or the network as an item's source.
    /// - Throws: `.temporaryFailure` when it was never fetched and cannot be reached now, and what
    ///   `context(for:)` throws otherwise.
    func document(_ url: String, now: Date = Date()) throws(OffpeakError) -> CachedSource {
        switch try source(url, now: now) {
        case .success(let source): return source
        case .failure(let reason):
            // A feed its site forbids is never read, skipped or not: the spec names it.
            let status: ExitStatus
            if case .disallowed = reason { status = .dataError } else { status = .temporaryFailure }
            throw OffpeakError(status, reason.description)
        }
    }

    /// How long a copy checked now stays fresh under a `cache_ttl` of `ttl`: a twentieth less, at
    /// most an hour less. A daily job with `cache_ttl: 24h` runs at about the same time each day,
    /// a few seconds later or earlier; with the full TTL, a copy checked a second later yesterday
    /// would still be fresh today and a change would wait a whole day to be seen.
    static func freshFor(_ ttl: TimeInterval) -> TimeInterval {
        ttl - min(ttl / 20, 3600)
    }

    /// One source's copy, or the unreachable error that makes the item wait, or (`skipDisallowed`)
    /// the robots.txt refusal that skips it.
    private func source(_ url: String, now: Date) throws(OffpeakError) -> Result<CachedSource, SourceError> {
        if let cached = try cache.source(url: url, now: now) {
            if cached.fresh || offline { return .success(cached.source) }
            return try revalidate(cached.source, now: now)
        }
        if offline {
            let why = "not fetched while the job's conditions do not hold"
            return .failure(.unreachable(fetcher.redactor.redact(url), why))
        }
        let followed = try fetcher.follow(url, now: now, cancellation: cancellation) {
            hop throws(OffpeakError) in try robots.refusal(for: hop, now: now)
        }
        switch followed.outcome {
        case .failure(let error):
            if case .unreachable = error { return .failure(error) }
            if case .disallowed = error { return try disallowed(error) }
            throw OffpeakError(Self.status(of: error), error.description)
        case .success(.fetched(let source)):
            try save(source, now: now)
            return .success(source)
        case .success(.notModified):
            // The fetcher reports `.notModified` only to a conditional request, which this is not.
            throw OffpeakError(.software, "source \(url): 304 Not Modified to an unconditional request")
        }
    }

    /// A robots.txt refusal: the item is skipped (`skipDisallowed`), else fails.
    private func disallowed(_ error: SourceError) throws(OffpeakError) -> Result<CachedSource, SourceError> {
        guard skipDisallowed else { throw OffpeakError(.dataError, error.description) }
        return .failure(error)
    }

    /// A stale copy checked against the server (at the URL it moved to, if it did); any failure
    /// but a robots.txt that now forbids it falls back to the copy itself.
    private func revalidate(_ stale: CachedSource, now: Date) throws(OffpeakError) -> Result<
        CachedSource, SourceError
    > {
        let followed = try fetcher.follow(
            stale.url, from: stale.movedTo, etag: stale.etag, lastModified: stale.lastModified, now: now,
            cancellation: cancellation
        ) { hop throws(OffpeakError) in try robots.refusal(for: hop, now: now) }
        switch followed.outcome {
        case .failure(let error):
            if case .disallowed = error { return try disallowed(error) }
            let age = Int(now.timeIntervalSince(stale.fetchedAt) / 3600)
            logger.warning("\(error); using the cached copy from \(age) h ago")
            return .success(stale)
        case .success(.notModified) where followed.movedTo == stale.movedTo:
            try cache.refresh(sourceURL: stale.url, ttl: ttl, now: now)
            return .success(stale)
        case .success(.notModified):
            // Current, but found at a new address: kept with it.
            var moved = stale
            moved.movedTo = followed.movedTo
            try cache.save(source: moved, job: job, ttl: ttl, keep: keep, now: now)
            return .success(moved)
        case .success(.fetched(let source)):
            try save(source, now: now)
            return .success(source)
        }
    }

    private func save(_ source: CachedSource, now: Date) throws(OffpeakError) {
        try cache.save(source: source, job: job, ttl: ttl, keep: keep, now: now)
        logger.debug(
            "fetched source \(fetcher.redactor.redact(source.url)) (\(source.contentType), \(source.text.count) characters)"
        )
    }

    static func status(of error: SourceError) -> ExitStatus {
        if case .http(_, let status, _) = error, status >= 500 || status == 429 { return .unavailable }
        return .dataError
    }

    /// `<source url="URL">` block; the URL's `&`, `"`, `<` are escaped so the tag stays well formed.
    static func render(_ source: CachedSource) -> String {
        let url = source.url.replacingOccurrences(of: "&", with: "&amp;")
            .replacingOccurrences(of: "\"", with: "&quot;").replacingOccurrences(of: "<", with: "&lt;")
        var text = source.text
        if text.count > maxCharacters {
            text =
                String(text.prefix(maxCharacters))
                + "\n[truncated: the source continues past \(maxCharacters) characters]"
        }
        return "<source url=\"\(url)\">\n\(text)\n</source>"
    }
}
