import Foundation

/// What became of an item since the job's previous run (issue 24, item 3), as `index.json` says:
/// `new` when that run did not have it (or there was none), `unchanged` when its prompt is byte for
/// byte the one that run asked (its fetched sources included: the prompt key is the whole
/// request's), `changed` otherwise. An item that searches the web rests on pages its prompt does
/// not hold: it is `changed` when its answer is, whatever its prompt.
///
/// The previous run is the job's newest finished run created before this one, so a run's changes
/// read the same from the store at any time, on any host: `offpeak outputs` writes the same
/// `index.json` as the run did.
enum ItemChange: String, Codable, Sendable, Equatable {
    case new, changed, unchanged
}

/// What a run's `index.json` says of each item of its spec beyond its answer: its change since the
/// job's previous run, and the research sources behind it (issue 24, items 3 and 5).
struct ItemNotes: Sendable, Equatable {
    var change: ItemChange
    /// `RequestRecord.sources` as stored: decoded (`citations`) only where outputs list them.
    var sources: String?

    var citations: [SourceCitation] { SourceCitation.decoded(sources) }

    /// The notes of each item the spec of `run` listed, by item id; none for a run of submitted
    /// requests, whose items are new by nature.
    static func of(_ run: RunRecord, store: Store) throws(OffpeakError) -> [String: ItemNotes] {
        let prompts = try store.runs.itemPrompts(runID: run.id)
        guard !prompts.isEmpty else { return [:] }
        let previous = try store.runs.latestFinishedRun(job: run.job, createdBefore: run.createdAt)
        let before =
            try previous.map { run throws(OffpeakError) in try store.runs.itemPrompts(runID: run.id) } ?? [:]
        // Answers are read only for a job that searches, and compared only for its searching items.
        let searching: (String) -> Bool = run.storedSpec().map(Self.searchingItems) ?? { _ in false }
        var answers: (now: [String: String], before: [String: String])?
        if let previous, prompts.keys.contains(where: searching) {
            answers = (
                try store.runs.itemAnswers(runID: run.id), try store.runs.itemAnswers(runID: previous.id)
            )
        }
        return Dictionary(
            uniqueKeysWithValues: prompts.map { item, prompt in
                var change: ItemChange =
                    before[item].map { $0.cacheKey == prompt.cacheKey ? .unchanged : .changed } ?? .new
                if change == .unchanged, searching(item), let answers,
                    answers.now[item] != answers.before[item]
                {
                    change = .changed
                }
                return (item, ItemNotes(change: change, sources: prompt.sources))
            })
    }

    /// Whether an item of `spec` searches the web: every item of a job with `search` (its feed
    /// entries too), else the items with their own.
    private static func searchingItems(_ spec: JobSpec) -> (String) -> Bool {
        if spec.search != nil { return { _ in true } }
        let items = Set(spec.items.filter { $0.search != nil }.map(\.id))
        return { items.contains($0) }
    }
}
