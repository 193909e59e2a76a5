import Foundation

/// What `offpeak status` shows: recent runs, what each has done and spent, and today's spend; and
/// the provider batches still out, as the provider last described them.
public struct StatusReport: Sendable, Codable {
    struct RunLine: Sendable, Codable, Equatable {
        var id: String
        var job: String
        var state: RunState
        var reason: String?
        var budgetStop: String?
        var model: String
        var itemsTotal: Int
        var itemsDone: Int
        var itemsFailed: Int
        var itemsCached: Int
        /// Requests out in a provider batch now (not answered, not failed: on their way).
        var itemsInBatch = 0
        /// The host whose process holds the run's lease now (`OFFPEAK_HOST`); nil when none does.
        var host: String?
        var spend: Spend
        var createdAt: Date
        var updatedAt: Date

        /// "2/3 (1 failed) (4 in batch)": the ITEMS cell.
        var itemsCell: String {
            var items = "\(itemsDone)/\(itemsTotal)"
            if itemsFailed > 0 { items += " (\(itemsFailed) failed)" }
            if itemsCached > 0 { items += " (\(itemsCached) cached)" }
            if itemsInBatch > 0 { items += " (\(itemsInBatch) in batch)" }
            return items
        }

        /// Why it is in its state, with the budget that stopped it.
        var why: String {
            var why = reason ?? ""
            if let limit = budgetStop, !why.contains(limit) { why = "budget \(limit): " + why }
            return why
        }
    }

    var runs: [RunLine]
    var spendToday: Spend
    /// Runs among the newest whose rows cannot be read: listed, not a reason to show nothing.
    var unreadable: [UnreadableRun] = []
    /// Provider batches still out (preparing, submitted, ended), of any run, newest first.
    var batches: [BatchLine] = []
    /// Models whose batched prompts lost items, and what offpeak does about it.
    var models: [FitnessLine] = []
    /// Jobs and models the batch audit has looked at, and what it decided.
    var audits: [AuditLine] = []
    /// Spend against each workspace budget set in offpeak.yaml (`budget:`); `nil` (left out of
    /// `--json`) when none is set.
    var budgets: [BudgetLine]?
    /// Provider routes found down, whose calls go to their fallbacks until then (`ProviderOutage`);
    /// `nil` (left out of `--json`) when none is.
    var down: [DownLine]?
    /// The longest WHY shown in the table; `--json` and `result` have the whole text.
    static let whyWidth = 160

    public static func make(store: Store, now: Date = Date(), limit: Int = 20) throws(OffpeakError)
        -> StatusReport
    {
        try make(store: store, now: now, limit: limit, budget: WorkspaceBudget())
    }

    /// The report, with a line per workspace budget `budget` sets.
    static func make(store: Store, now: Date, limit: Int, budget: WorkspaceBudget) throws(OffpeakError)
        -> StatusReport
    {
        var lines: [RunLine] = []
        let rows = try store.runs.runRows(limit: limit)
        let batches = try store.batches.batchListings(all: false).map(BatchLine.init)
        let runsOut = Set(batches.map(\.run))
        let held = try store.leases.liveLeases(now: now)
        for run in rows.runs {
            lines.append(
                try RunLine(run, store: store, inBatch: runsOut.contains(run.id), host: held[run.id]?.host))
        }
        let midnight = Calendar.current.startOfDay(for: now)
        return StatusReport(
            runs: lines, spendToday: try store.ledger.spend(since: midnight), unreadable: rows.unreadable,
            batches: batches,
            models: try store.batches.batchFitnessRecords().compactMap { FitnessLine($0, now: now) },
            audits: try store.audits.auditRecords(job: nil).map { AuditLine($0, now: now) },
            budgets: budget.isSet ? try BudgetLine.lines(budget, store: store, now: now) : nil,
            down: DownLine.lines(try store.limits.outages(now: now)))
    }

    /// The report as a person reads it.
    public var text: String {
        var out = "spend today: \(spendToday.dollarCell(spendToday.dollars)) in "
        out +=
            "\(Plural.count(spendToday.calls, "call")) (naive \(spendToday.dollarCell(spendToday.naiveDollars)))\n"
        for line in budgets ?? [] { out += line.text }
        for line in down ?? [] { out += line.text }
        if runs.isEmpty && unreadable.isEmpty { return out + "no runs yet\n" }
        let table = TextTable(columns: ["RUN", "STATE", "ITEMS", "CALLS", "COST", "WHY"])
        for run in runs {
            table.add([
                run.id, run.host.map { "\(run.state.rawValue) on \($0)" } ?? run.state.rawValue,
                run.itemsCell,
                run.spend.callsCell,
                run.spend.dollarCell(run.spend.dollars),
                TextTable.shortened(TextTable.oneLine(run.why), to: Self.whyWidth),
            ])
        }
        for run in unreadable {
            table.add([run.id, "unreadable", "-", "-", "-", TextTable.shortened(run.why, to: Self.whyWidth)])
        }
        let unpriced = runs.reduce(0) { $0 + $1.spend.unpricedCalls }
        return out + table.render() + (Spend.unpricedNote(calls: unpriced, models: []) ?? "") + batchesText
            + FitnessLine.text(models) + AuditLine.text(audits)
    }

    /// The batches still out, one line each, under the runs; nothing when there are none.
    var batchesText: String {
        guard !batches.isEmpty else { return "" }
        let table = TextTable(columns: [
            "RUN", "BATCH", "PROVIDER ID", "PROVIDER STATE", "PROGRESS", "SUBMITTED", "EXPIRES",
        ])
        for line in batches.sorted(by: { ($0.run, $0.preparedAt) < ($1.run, $1.preparedAt) }) {
            table.add([
                line.run, line.id, line.remoteIdCell, line.remoteStatusCell, line.progressCell,
                BatchLine.time(line.submittedAt), BatchLine.time(line.expiresAt),
            ])
        }
        return "\nprovider batches out:\n" + table.render() + BatchLine.failingText(batches)
    }
}

extension StatusReport.RunLine {
    /// `run` as the table shows it: its spend from the ledger, and with `inBatch` how many of its
    /// requests are out in a provider batch. (In an extension, so the memberwise init stays.)
    init(_ run: RunRecord, store: Store, inBatch: Bool, host: String?) throws(OffpeakError) {
        self.init(
            id: run.id, job: run.job, state: run.state, reason: run.reason, budgetStop: run.budgetStop,
            model: run.model, itemsTotal: run.itemsTotal, itemsDone: run.itemsDone,
            itemsFailed: run.itemsFailed, itemsCached: run.itemsCached,
            itemsInBatch: inBatch ? try store.batches.requestsInBatch(runID: run.id) : 0, host: host,
            spend: try store.ledger.spend(runID: run.id), createdAt: run.createdAt,
            updatedAt: run.updatedAt)
    }
}
