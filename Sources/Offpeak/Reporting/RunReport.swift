import Foundation

/// What `offpeak status RUN` shows, and the dashboard's page of a run: the run's line of `status`,
/// its requests by state (how many, and the first few of each), its provider batches still out,
/// what the batch audit decided for its job, and where its outputs are.
///
/// Each state is two reads of the run-and-state index, so the report costs the same for a run of a
/// hundred items and of a hundred thousand.
public struct RunReport: Sendable, Encodable {
    /// The requests of one state.
    struct StateLine: Sendable, Encodable, Equatable {
        var state: String
        var count: Int
        /// The first few in item order (`retrying`: the next due first).
        var first: [ItemLine]
        /// `retrying`: when the first is due (nil: now).
        var firstDue: Date?
    }

    /// A request as the report names it.
    struct ItemLine: Sendable, Encodable, Equatable {
        var item: String
        /// `chunk` or `reduce` for a step of a long item; nil for the item itself.
        var step: String?
        /// Why it failed, waits or was skipped, as stored (redacted when it was stored).
        var error: String?

        init(_ outline: RequestOutline) {
            item = outline.itemId
            step = outline.source.isStep ? outline.source.rawValue : nil
            error = outline.error
        }

        /// The item's id, with its step.
        var name: String { step.map { "\(item) (\($0))" } ?? item }
    }

    /// Where the run's outputs are, relative to the workspace.
    struct Outputs: Sendable, Encodable, Equatable {
        var folder: String
        /// `index.json`: each item's file, state and answer's model.
        var index: String
        /// `digest.md`, when the job writes a digest.
        var digest: String?
    }

    var run: StatusReport.RunLine
    var provider: String
    var tier: String
    var startedAt: Date?
    var finishedAt: Date?
    var states: [StateLine]
    /// Its provider batches still out (preparing, submitted, ended).
    var batches: [BatchLine]
    /// What the batch audit found for its job, per model.
    var audits: [AuditLine]
    /// Nil when the run keeps no spec that says (a run made before specs were kept).
    var outputs: Outputs?

    /// How many requests of each state are named.
    static let examples = 10

    /// The states in the order a person asks about them: what went wrong, what waits, what is done.
    static let stateOrder: [RequestRecord.State] = [
        .failed, .retrying, .waiting, .inBatch, .pending, .done, .skipped, .canceled,
    ]

    /// - Throws: `.dataError` when the store has no such run.
    public static func make(store: Store, runID: String, now: Date) throws(OffpeakError) -> RunReport {
        guard let run = try store.runs.run(id: runID) else {
            throw OffpeakError(
                .dataError, "run \(runID): no such run in the store; `offpeak status` lists the runs")
        }
        let batches = try store.batches.batchListings(all: false).map(BatchLine.init).filter {
            $0.run == run.id
        }
        var states: [StateLine] = []
        for state in stateOrder {
            let summary = try store.runs.summary(runID: run.id, state: state, examples: examples)
            guard summary.count > 0 else { continue }
            states.append(
                StateLine(
                    state: state.rawValue, count: summary.count, first: summary.examples.map(ItemLine.init),
                    firstDue: summary.firstDue))
        }
        let spec = run.storedSpec()
        let folder = spec.flatMap { try? OutputFolder.checked($0.output) }
        return RunReport(
            run: try StatusReport.RunLine(
                run, store: store, inBatch: !batches.isEmpty,
                host: try store.leases.liveLeases(now: now)[run.id]?.host),
            provider: run.provider, tier: run.tier, startedAt: run.startedAt, finishedAt: run.finishedAt,
            states: states, batches: batches,
            audits: try store.audits.auditRecords(job: run.job).map { AuditLine($0, now: now) },
            outputs: folder.map {
                Outputs(
                    folder: $0 + "/", index: $0 + "/index.json",
                    digest: spec?.digest == nil ? nil : $0 + "/" + OutputWriter.digestFile)
            })
    }

    /// The report as a person reads it.
    public var text: String {
        var out = "run \(run.id) of job \(run.job): \(run.state.rawValue)"
        out += run.host.map { " on \($0)\n" } ?? "\n"
        out += "model \(run.model) (\(provider), \(tier) tier); created \(ReportFormat.date(run.createdAt))"
        if let startedAt { out += ", started \(ReportFormat.date(startedAt))" }
        if let finishedAt { out += ", finished \(ReportFormat.date(finishedAt))" }
        out += "\nitems: \(run.itemsCell)\n\(run.spend.costLine)\n"
        if !run.why.isEmpty { out += "why: \(TextTable.oneLine(run.why))\n" }
        out += "\nrequests by state:\n"
        let table = TextTable(columns: ["STATE", "COUNT", "FIRST"])
        for line in states {
            var first = line.first.map(\.name).joined(separator: ", ")
            if line.count > line.first.count { first += ", ..." }
            table.add([line.state, "\(line.count)", TextTable.shortened(TextTable.oneLine(first), to: 100)])
        }
        out += states.isEmpty ? "none\n" : table.render()
        let reasons = states.flatMap { line in
            line.first.compactMap { item in item.error.map { (line.state, item.name, $0) } }
        }
        if !reasons.isEmpty {
            out += "\nwhy:\n"
            for (state, name, error) in reasons {
                out += "  \(state) \(name): \(TextTable.shortened(TextTable.oneLine(error), to: 160))\n"
            }
        }
        if !batches.isEmpty {
            let table = TextTable(columns: [
                "BATCH", "PROVIDER ID", "PROVIDER STATE", "PROGRESS", "SUBMITTED",
            ])
            for line in batches {
                table.add([
                    line.id, line.remoteIdCell, line.remoteStatusCell, line.progressCell,
                    BatchLine.time(line.submittedAt),
                ])
            }
            out += "\nprovider batches out:\n" + table.render()
        }
        out += AuditLine.text(audits)
        if let outputs {
            out += "\noutputs: \(outputs.folder) (\(outputs.index) names each item's file)"
            out += outputs.digest.map { ", digest \($0)\n" } ?? "\n"
        }
        return out
    }
}
