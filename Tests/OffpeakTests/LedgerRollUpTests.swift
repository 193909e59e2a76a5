import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// The ledger rolled up by day (issue 46, item 1), on the suite's store: a pruned run's calls past
/// `retention.ledger` become a row per local day and kind of call, and every total a report reads
/// stays: by job, model and day (the day of the calendar's zone, whose midnight a row never
/// crosses), the lanes, calls lost in flight, audits, searches, unpriced models, the cache's
/// savings, each run's counter, a budget's period.
@Suite(.ownThreads, .serialized) struct LedgerRollUpTests {
    static let now = Date()
    /// India's days start at 18:30 UTC: a roll-up by UTC day would merge calls of two local days.
    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "Asia/Kolkata") ?? .gmt
        return calendar
    }()
    /// 23:40 local time, 200 days back: the first day's calls; the second day's come 30 minutes on.
    static let dayOne = calendar.startOfDay(for: now - 200 * 86_400) + 23 * 3600 + 40 * 60
    static let dayTwo = dayOne + 30 * 60

    /// A ledger row, as a test writes one straight into the store.
    struct Call {
        var run: String
        var job = "j"
        var model = "m"
        var at: Date
        var dollars = 0.0011
        var naive = 0.0021
        var failed = false
        var hit = false
        var lost = false
        var audit = false
        var flex = false
        var batch = false
        var unpriced = false
        var searches = 0
    }

    static func engine(_ store: Store) -> any SQLEngine {
        switch store.engine {
        case .sqlite(let engine): engine
        case .postgres(let engine): engine
        }
    }

    static func insert(_ calls: [Call], into store: Store) throws {
        for (n, call) in calls.enumerated() {
            try engine(store).execute(
                """
                INSERT INTO ledger (at, job, run_id, provider, model, tier, downgraded, items, input_tokens,
                    output_tokens, cache_read_tokens, cache_write_tokens, dollars, naive_dollars, batch_api,
                    cache_hit, usage_estimated, latency_ms, failed, unpriced, host, search_requests, audit, flex,
                    lost)
                VALUES (\(call.at), \(call.job), \(call.run), 'sim', \(call.model), 'fast', \(false), \(n % 3 + 1),
                    \(call.hit ? 0 : 100 + n), \(call.failed ? 0 : 7 + n), \(3), \(1), \(call.dollars),
                    \(call.naive), \(call.batch), \(call.hit), \(call.lost), \(40 + n), \(call.failed),
                    \(call.unpriced), '', \(call.searches), \(call.audit), \(call.flex), \(call.lost))
                """)
        }
    }

    static func run(_ id: String, job: String, finished: Date, state: RunState = .completed) -> RunRecord {
        var run = StoreTests.run(id, job: job, state: state)
        run.createdAt = finished - 3600
        run.updatedAt = finished
        return run
    }

    /// A spend as text, its dollars to a billionth of a cent: the sums are added in another order
    /// once rolled up.
    static func text(_ spend: Spend) -> String {
        "\(spend.calls) calls (\(spend.failedCalls) failed, \(spend.unpricedCalls) unpriced), "
            + "\(spend.inputTokens)/\(spend.outputTokens)/\(spend.cacheReadTokens)/\(spend.cacheWriteTokens) tokens, "
            + String(format: "$%.11f naive $%.11f", spend.dollars, spend.naiveDollars)
    }

    /// Every total the ledger's reports read, as text.
    static func totals(_ store: Store) throws -> [String] {
        var lines: [String] = []
        for key in [CostLine.Key.job, .model] {
            lines += try store.ledger.costs(groupedBy: key).map { "by \(key): \($0.key) \(text($0.spend))" }
        }
        lines += try store.ledger.costsByDay(calendar: calendar).map { "day \($0.key) \(text($0.spend))" }
        lines += try (store.ledger.spendByLane() ?? []).map {
            "lane \($0.lane) \($0.model) \($0.unpriced) \($0.items) items \(text($0.spend))"
        }
        let lost = try store.ledger.lostCalls()
        lines.append(String(format: "lost %d $%.11f", lost.calls, lost.dollars))
        lines.append("searches \(try store.ledger.searchesByModel())")
        lines.append("unpriced \(try store.ledger.unpricedModels())")
        lines.append("audits \(text(try store.audits.auditSpend(job: nil, runID: nil)))")
        lines.append("since \(text(try store.ledger.spend(since: dayOne - 86_400)))")
        lines.append("totals \(text(try store.ledger.workspaceTotals().spend))")
        let cache = try store.cache.cacheStats(now: now, today: LocalDay(containing: now, calendar: calendar))
        lines.append(String(format: "cache saved $%.11f", cache.savedDollarsTotal))
        let budget = try store.ledger.budgetUse(
            in: DateInterval(start: dayOne - 86_400, end: dayTwo + 86_400))
        lines.append(String(format: "budget $%.11f %d tokens", budget.spentDollars, budget.spentTokens))
        for run in ["r1", "r2", "r3", "r4"] {
            let spend = try store.ledger.spend(runID: run)
            lines.append("run \(run) \(text(spend))")
            #expect(text(spend) == text(try store.ledger.recountSpend(runID: run)), "run_spend of \(run)")
        }
        return lines
    }

    @Test func rollingUpKeepsEveryTotalAndNoDayCrossesMidnight() throws {
        let workspace = try TemporaryWorkspace()
        let store = try StoreTests.store(workspace)
        try store.runs.insert(run: Self.run("r1", job: "j", finished: Self.dayTwo + 3600), requests: [])
        try store.runs.insert(run: Self.run("r2", job: "k", finished: Self.dayTwo + 3600), requests: [])
        // Pruned with the others, but within the ledger's horizon: its calls keep their rows.
        try store.runs.insert(run: Self.run("r3", job: "k", finished: Self.now - 100 * 86_400), requests: [])
        // Never finished: never pruned, its rows never rolled up.
        try store.runs.insert(
            run: Self.run("r4", job: "k", finished: Self.dayTwo, state: .running), requests: [])
        let (one, two) = (Self.dayOne, Self.dayTwo)
        try Self.insert(
            [
                Call(run: "r1", at: one, dollars: 0.0011), Call(run: "r1", at: one + 60, dollars: 0.0013),
                Call(run: "r1", at: one + 120, dollars: 0, failed: true),
                Call(run: "r1", at: one + 130, dollars: 0, naive: 0.0009, hit: true),
                Call(run: "r1", at: one + 131, dollars: 0, naive: 0.0007, hit: true),
                Call(run: "r1", at: one + 140, dollars: 0.0012, lost: true),
                Call(run: "r1", at: one + 150, dollars: 0.0017, audit: true),
                Call(run: "r1", at: one + 160, dollars: 0.0006, flex: true),
                Call(run: "r1", model: "m2", at: one + 170, dollars: 0.0004, batch: true),
                Call(run: "r1", model: "x", at: one + 180, dollars: 0, unpriced: true, searches: 2),
                Call(run: "r1", at: two, dollars: 0.0019), Call(run: "r1", at: two + 60, dollars: 0.0023),
                Call(run: "r2", job: "k", at: one + 10), Call(run: "r2", job: "k", at: one + 20),
                Call(run: "r2", job: "k", at: one + 30),
                Call(run: "r3", job: "k", at: Self.now - 101 * 86_400),
                Call(run: "r3", job: "k", at: Self.now - 101 * 86_400 + 60),
                Call(run: "r4", job: "k", at: one + 40), Call(run: "r4", job: "k", at: one + 50),
            ], into: store)
        let before = try Self.totals(store)
        let days = [one, two].map { LedgerDay(containing: $0, calendar: Self.calendar).text }
        #expect(days[0] != days[1])
        #expect(days.allSatisfy { day in before.contains { $0.hasPrefix("day \(day) ") } })

        let dry = try store.prune(
            keeping: 90 * 86_400, keepingLedger: 180 * 86_400, now: Self.now, limit: nil, dryRun: true,
            calendar: Self.calendar)
        #expect(dry.runs == 3)
        #expect(dry.ledger == LedgerRollUpReport(runs: 2, rows: 15, rowsLeft: 10))
        #expect(try workspace.storeValues("SELECT count(*) FROM ledger") == "19", "a dry run changes nothing")

        let pruned = try store.prune(
            keeping: 90 * 86_400, keepingLedger: 180 * 86_400, now: Self.now, limit: nil,
            calendar: Self.calendar)
        #expect(pruned.runs == 3)
        #expect(pruned.ledger == LedgerRollUpReport(runs: 2, rows: 15, rowsLeft: 10))
        #expect(try workspace.storeValues("SELECT count(*) FROM ledger") == "14")
        #expect(
            try workspace.storeValues("SELECT calls FROM ledger WHERE run_id = 'r2'") == "3",
            "one row for r2's three calls")
        #expect(
            try workspace.storeValues(
                "SELECT count(*) FROM ledger WHERE run_id = 'r1' AND NOT cache_hit AND calls = 2")
                == "2", "r1's two answered calls of each local day")
        #expect(try Self.totals(store) == before)

        let again = try store.prune(
            keeping: 90 * 86_400, keepingLedger: 180 * 86_400, now: Self.now, limit: nil,
            calendar: Self.calendar)
        #expect(again == PruneReport(), "a run is rolled up once")
        #expect(try Self.totals(store) == before)
    }
}
