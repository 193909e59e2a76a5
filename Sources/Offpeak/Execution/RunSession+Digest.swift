import Foundation
import Logging

/// A run's digest (issue 24, item 3): once every item of the run is settled (answered or failed for
/// good), one more request over the answers of the items that are new or changed since the job's
/// previous run (`ItemChange`), answered into `digest.md` (`OutputWriter`).
///
/// The digest is an ordinary request, kept as the run's one reduce step (`RequestSource.reduce`,
/// item id `#digest`): cached by its prompt like any answer (the same new and changed answers give
/// the same prompt), priced, budgeted, batched and committed with its checkpoint, and decided from
/// what is committed (`RunStore.advanceSteps`), so a run stopped anywhere asks for it once. A run
/// in which nothing is new or changed asks for none, and the last `digest.md` stays.
extension RunSession {
    /// The digest request's item id: `#` cannot start an item id a spec gives (`JobSpecParser`).
    static let digestItemID = "#digest"

    /// Inserts the run's digest request when its items are settled and some are new or changed.
    /// - Returns: whether there is a new request to send.
    func advanceDigest() throws(OffpeakError) -> Bool {
        guard let digest = spec.digest, !plan.canceled else { return false }
        let changes = try ItemNotes.of(run, store: context.store).mapValues(\.change)
        var asked = spec
        asked.maxTokens = digest.maxTokens
        let planner = RequestPlanner(provider: context.provider.kind, model: run.model)
        let added = try context.store.runs.advanceSteps(runID: run.id) { requests, results in
            var steps = StepChanges()
            let items = requests.filter { $0.source == .spec }
            guard !requests.contains(where: { $0.source == .reduce && $0.itemId == Self.digestItemID }),
                items.allSatisfy({ [.done, .failed, .canceled, .skipped].contains($0.state) })
            else { return steps }
            let answered = items.sorted { $0.position < $1.position }.compactMap { item in
                item.state == .done && changes[item.itemId] != .unchanged
                    ? results[item.id].map { (item.itemId, changes[item.itemId] ?? .new, $0.text) } : nil
            }
            guard !answered.isEmpty else { return steps }
            let prompt = digest.template.render([
                JobSpec.Digest.changesVariable: Self.digestChanges(answered), "count": String(answered.count),
            ])
            let request = planner.request(asked, userMessage: prompt)
            let (payload, key) = RequestPlanner.payloadAndKey(provider: planner.provider, request: request)
            let now = Date()
            steps.insert.append(
                RequestRecord(
                    id: RequestRecord.newID(), runId: run.id, job: spec.name, itemId: Self.digestItemID,
                    position: (items.map(\.position).max() ?? 0) + 1, source: .reduce, clientId: nil,
                    tier: spec.tier.rawValue, payload: payload, cacheKey: key, state: .pending, attempts: 0,
                    nextAttemptAt: nil, error: nil, createdAt: now, updatedAt: now))
            return steps
        }
        if added { context.logger.info("digest: asked over the new and changed items") }
        return added
    }

    /// `{{changes}}`: each answer as `<item id="ID" change="new">…</item>`, in item order, a blank
    /// line between; the id's `&`, `"` and `<` escaped so the tag stays well formed.
    static func digestChanges(_ answered: [(id: String, change: ItemChange, text: String)]) -> String {
        answered.map { id, change, text in
            let id = id.replacingOccurrences(of: "&", with: "&amp;")
                .replacingOccurrences(of: "\"", with: "&quot;").replacingOccurrences(of: "<", with: "&lt;")
            return "<item id=\"\(id)\" change=\"\(change.rawValue)\">\n\(text)\n</item>"
        }.joined(separator: "\n\n")
    }
}
