import Foundation

/// What became of an item since the job's previous run (issue 24, item 3), as `index.json` says:
/// `new` when that run did not have it (or there was none), `unchanged` when its prompt is byte for
/// byte the one that run asked (its fetched sources included: the prompt key is the whole
/// request's), `changed` otherwise.
///
/// The previous run is the job's newest finished run created before this one, so a run's changes
/// read the same from the store at any time, on any host: `offpeak outputs` writes the same
/// `index.json` as the run did.
enum ItemChange: String, Codable, Sendable, Equatable {
    case new, changed, unchanged

    /// The change of each item the spec of `run` listed, by item id; none for a run of submitted
    /// requests, whose items are new by nature.
    static func changes(of run: RunRecord, store: Store) throws(OffpeakError) -> [String: ItemChange] {
        let keys = try store.runs.itemKeys(runID: run.id)
        guard !keys.isEmpty else { return [:] }
        let before =
            try store.runs.latestFinishedRun(job: run.job, createdBefore: run.createdAt)
            .map { previous throws(OffpeakError) in try store.runs.itemKeys(runID: previous.id) } ?? [:]
        return keys.mapValues { _ in .new }.merging(
            keys.compactMap { item, key in before[item].map { (item, $0 == key ? .unchanged : .changed) } },
            uniquingKeysWith: { _, known in known })
    }
}
