import Foundation
import Logging

/// Long documents in a run (DESIGN.md, "Long documents"): a long item waits while its chunks are
/// summarized (the map step), then its summaries are combined, level by level when they do not fit
/// one prompt (the reduce steps), and last its own request asks for the final answer.
///
/// Every step is an ordinary request: cached, batched, and committed with its checkpoint like any
/// other. What comes next is decided from what is committed, never remembered, so a run stopped
/// anywhere (a budget, a crash between a commit and the next insert) decides the same next step
/// when it resumes and repeats no call.
extension RunSession {
    /// Inserts the next steps of every long item whose current steps are all answered.
    /// - Returns: whether there are new requests to send.
    func advanceReductions() throws(OffpeakError) -> Bool {
        guard !plan.canceled else { return false }
        let model = run.model
        let provider = context.provider.kind
        var long: [(item: JobSpec.Item, chunks: [String])] = []
        let planner = LongDocumentPlanner(
            spec: spec, planner: RequestPlanner(provider: provider, model: model))
        for item in spec.items {
            if let chunks = planner.chunks(of: item) { long.append((item, chunks)) }
        }
        guard !long.isEmpty else { return false }
        let spec = spec
        let runID = run.id
        let added = try context.store.runs.advanceSteps(runID: runID) { requests, results in
            let rows = Dictionary(requests.map { ($0.itemId, $0) }, uniquingKeysWith: { first, _ in first })
            var changes = StepChanges()
            for (item, chunks) in long {
                guard let final = rows[item.id], final.state == .waiting else { continue }
                // The steps are asked of the model the item's own request names.
                let model = (try? final.completionRequest().model) ?? model
                let walk = StepWalk(
                    planner: LongDocumentPlanner(
                        spec: spec, planner: RequestPlanner(provider: provider, model: model)),
                    item: item, final: final, rows: rows, results: results,
                    steps: requests.filter {
                        LongDocumentPlanner.level(ofStep: $0.itemId, item: item.id) != nil
                    })
                walk.decide(chunks: chunks, into: &changes)
            }
            return changes
        }
        if added { context.logger.info("long documents: next steps planned") }
        return added
    }
}

/// One long item's way through its steps, read from the run's rows: the first level not fully
/// answered gets its missing steps, or a level fully answered leads to the next one.
private struct StepWalk {
    let planner: LongDocumentPlanner
    let item: JobSpec.Item
    /// The item's own request, waiting until its steps are done.
    let final: RequestRecord
    let rows: [String: RequestRecord]
    let results: [String: ResultRecord]
    /// The rows that look like this item's steps (by id).
    let steps: [RequestRecord]

    func decide(chunks: [String], into changes: inout StepChanges) {
        var wanted = planner.mapSteps(item, chunks: chunks)
        var level = 1
        var kept: Set<String> = []
        while true {
            guard let summaries = reconcile(level: level, wanted, kept: &kept, into: &changes) else {
                dropStale(upTo: level, kept: kept, into: &changes)
                return
            }
            level += 1
            switch planner.reduction(item, summaries: summaries, level: level) {
            case .final(let step):
                dropStale(upTo: Int.max, kept: kept, into: &changes)
                changes.promote.append((final.id, step.payload, step.cacheKey))
                return
            case .reduce(let next):
                wanted = next
            }
        }
    }

    /// Brings one level's rows in line with the steps it should have.
    /// - Returns: the level's answers in order once every step is answered, else nil.
    private func reconcile(
        level: Int, _ wanted: [LongDocumentPlanner.Step], kept: inout Set<String>,
        into changes: inout StepChanges
    ) -> [String]? {
        var answers: [String] = []
        var complete = true
        for (index, step) in wanted.enumerated() {
            kept.insert(step.itemId)
            guard let row = rows[step.itemId] else {
                changes.insert.append(record(step, level: level))
                complete = false
                continue
            }
            guard row.source.isStep else {
                changes.fail.append((final.id, "step id \(step.itemId) is taken by another request"))
                return nil
            }
            // A changed document changes its chunks: an answer to the old text is not kept.
            guard row.payload == step.payload, row.state != .done || results[row.id] != nil else {
                changes.delete.append(row.id)
                changes.insert.append(record(step, level: level))
                complete = false
                continue
            }
            switch row.state {
            case .done:
                answers.append(results[row.id]?.text ?? "")
            case .failed:
                let what = level == 1 ? "part \(index + 1) of \(wanted.count)" : "reduce step \(step.itemId)"
                changes.fail.append((final.id, "\(what) failed: \(row.error ?? "unknown error")"))
                return nil
            case .pending, .retrying, .waiting, .inBatch, .canceled, .skipped:
                complete = false
            }
        }
        return complete ? answers : nil
    }

    /// Deletes this item's step rows up to `level` that no step wants any more.
    private func dropStale(upTo level: Int, kept: Set<String>, into changes: inout StepChanges) {
        for row in steps where !kept.contains(row.itemId) {
            guard row.source.isStep,
                let rowLevel = LongDocumentPlanner.level(ofStep: row.itemId, item: item.id), rowLevel <= level
            else { continue }
            changes.delete.append(row.id)
        }
    }

    private func record(_ step: LongDocumentPlanner.Step, level: Int) -> RequestRecord {
        let now = Date()
        var record = RequestRecord(
            id: RequestRecord.newID(), runId: final.runId, job: final.job, itemId: step.itemId,
            position: final.position,
            source: level == 1 ? .chunk : .reduce,
            clientId: nil, tier: final.tier, payload: step.payload, cacheKey: step.cacheKey, state: .pending,
            attempts: 0, nextAttemptAt: nil, error: nil, createdAt: now, updatedAt: now)
        record.cachePolicy = final.cachePolicy
        return record
    }
}
