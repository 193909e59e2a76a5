import Foundation

extension JobRunner {
    /// `spec` with its feeds' new entries as items (issue 24, item 2): each RSS or Atom entry not
    /// answered in an earlier run of the job becomes an item, oldest first, at most `max_new` of
    /// them (the rest wait for the next run). An entry's id is its `guid` / `id` (else its link),
    /// `{{item}}` its title and summary, and its linked page its one source (`{{sources}}`),
    /// fetched like any other.
    ///
    /// Each feed is revalidated on every run (a conditional request; a `304` costs nothing), so a
    /// new entry is seen at once whatever the job's `cache_ttl`; offline, the last copy is read.
    ///
    /// Entries the job's unfinished run took and has not answered stay in it, first, even those
    /// that have left their feed since (a busy feed keeps only its latest entries): they count
    /// against that run's `max_new`, and nothing taken is dropped.
    /// - Throws: `.temporaryFailure` when a feed was never fetched and cannot be reached now (the
    ///   run waits for it, nothing is lost); `.dataError` when a feed is not RSS or Atom, naming it.
    func withFeedItems(_ spec: JobSpec, offline: Bool, cancellation: CancellationFlag?, now: Date)
        throws(OffpeakError) -> JobSpec
    {
        guard !spec.feeds.isEmpty else { return spec }
        let research = research(for: spec, ttl: 0, offline: offline, cancellation: cancellation)
        var entries: [(feed: String, entry: FeedEntry)] = []
        for url in spec.feeds {
            let document = try research.document(url, now: now)
            do { entries += try Feed.parse(Data(document.text.utf8), url: url).map { (url, $0) } } catch {
                throw OffpeakError(.dataError, error.description)
            }
        }
        var taken = try store.runs.answeredItems(job: spec.name).union(spec.items.map(\.id))
        taken.insert(RunSession.digestItemID)
        let unfinished = try store.runs.latestResumableRun(job: spec.name)?.storedSpec()?.items ?? []
        let carried = unfinished.filter {
            $0.feed.map(spec.feeds.contains) == true && taken.insert($0.id).inserted
        }
        let feedOf = Dictionary(
            entries.map { ($0.entry.id, $0.feed) }, uniquingKeysWith: { first, _ in first })
        let new = Feed.oldestFirst(entries.map(\.entry)).filter { taken.insert($0.id).inserted }
        let chosen = spec.maxNew.map { Array(new.prefix(max(0, $0 - carried.count))) } ?? new
        if chosen.count < new.count {
            let waiting = new.count - chosen.count
            logger.info(
                "job \(spec.name): \(chosen.count) new feed entries this run (max_new), \(waiting) wait for the next"
            )
        }
        var expanded = spec
        expanded.items += carried
        expanded.items += chosen.map { entry in
            let text = [entry.title, entry.summary].filter { !$0.isEmpty }.joined(separator: "\n\n")
            return JobSpec.Item(
                id: entry.id, variables: ["id": entry.id, "item": text],
                sources: entry.link.map { [$0] } ?? [], feed: feedOf[entry.id])
        }
        return expanded
    }

    /// The research context of every item that has sources (the job's, then its own), fetched or
    /// taken from the cache; an item whose source cannot be had yet waits. A stop signal aborts
    /// fetches in flight when its grace runs out, as it does provider calls. `offline` (the job's
    /// conditions do not hold, and the pass only collects batches already out) fetches nothing:
    /// cached copies only, and an item with a source never fetched waits.
    func sources(
        for spec: JobSpec, offline: Bool, cancellation: CancellationFlag?, now: Date
    ) throws(OffpeakError) -> [String: Result<SourceContext, OffpeakError>] {
        guard !spec.sources.isEmpty || spec.items.contains(where: { !$0.sources.isEmpty }) else { return [:] }
        let research = research(
            for: spec, ttl: spec.cacheTTL, offline: offline, cancellation: cancellation)
        let items = spec.items.filter { !(spec.sources + $0.sources).isEmpty }
        let found = research.contexts(for: items.map { spec.sources + $0.sources }, now: now)
        return Dictionary(zip(items.map(\.id), found), uniquingKeysWith: { first, _ in first })
    }

    /// What reads `spec`'s sources and feeds, fresh for `ttl`; from the cache only when `offline`.
    func research(for spec: JobSpec, ttl: TimeInterval, offline: Bool, cancellation: CancellationFlag?)
        -> ResearchSources
    {
        var research = ResearchSources(
            cache: cache, fetcher: SourceFetcher(client: HTTPClient(), redactor: provider.redactor), ttl: ttl,
            job: spec.name, keep: spec.reusesUnchanged, logger: logger, cancellation: cancellation)
        research.offline = offline
        research.skipDisallowed = spec.robots == .skip
        return research
    }
}
