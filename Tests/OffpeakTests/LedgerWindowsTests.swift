import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Issue 48, items 4 and 5: the ledger keeps the price window each call was billed in, what waiting
/// for cheaper prices saved on it and the tags of its work; `costs` shows them by job, model, day
/// and tag, and the metrics by window and tag. Rows written straight into the store (either engine),
/// so the sums are known to the cent.
@Suite(.ownThreads) struct LedgerWindowsTests {
    static func at(_ text: String) throws -> Date { try PriceWindowsTests.at(text) }

    static func entry(
        _ job: String, _ at: String, dollars: Double, window: String = "", saved: Double = 0,
        tags: [String] = [],
        model: String = "deepseek-flash"
    ) throws -> LedgerEntry {
        var entry = StoreCountersTests.ledger(
            run: "r-\(job)", items: 1, hit: false, failed: false, dollars: dollars)
        entry.job = job
        entry.model = model
        entry.at = try Self.at(at)
        entry.priceWindow = window
        entry.waitingSaved = saved
        entry.tags = Tags.stored(tags)
        return entry
    }

    static func store(_ workspace: TemporaryWorkspace) throws -> Store {
        let store = try StoreTests.store(workspace)
        let atlas = ["project:atlas", "customer:acme"]
        try store.insertLedger([
            try entry("tides", "2026-11-30T03:00:00Z", dollars: 0.004, window: "peak", tags: atlas),
            try entry(
                "tides", "2026-11-30T05:00:00Z", dollars: 0.002, window: "off-peak", saved: 0.002, tags: atlas
            ),
            try entry(
                "tides", "2026-11-30T11:00:00Z", dollars: 0.002, window: "off-peak", saved: 0.002, tags: atlas
            ),
            try entry(
                "notes", "2026-11-30T12:00:00Z", dollars: 0.010, tags: ["project:atlas"],
                model: "claude-haiku-4-5"),
            try entry("misc", "2026-12-01T09:00:00Z", dollars: 0.001, window: "off-peak"),
        ])
        return store
    }

    static var utc: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .gmt
        return calendar
    }

    static let waiting =
        "saved by waiting for cheaper prices: $0.004000 on 2 calls (against the prices their runs waited through)"

    @Test func costsByJobShowEachJobsWindowsAndWhatWaitingSaved() throws {
        let workspace = try TemporaryWorkspace()
        let report = try CostReport.make(store: try Self.store(workspace), by: .job, calendar: Self.utc)
        #expect(
            report.text.components(separatedBy: "\n") == [
                "JOB    CALLS  INPUT  CACHE-READ  OUTPUT  COST       NAIVE      SAVED",
                "notes  1      100    3           7       $0.0100    $0.0170    $0.007000",
                "tides  3      300    9           21      $0.008000  $0.0136    $0.005600",
                "misc   1      100    3           7       $0.001000  $0.001700  $0.000700",
                "total  5      500    15          35      $0.0190    $0.0323    $0.0133",
                "",
                "by price window (models whose prices change with the clock):",
                "JOB    WINDOW    CALLS  COST",
                "tides  off-peak  2      $0.004000",
                "tides  peak      1      $0.004000",
                "misc   off-peak  1      $0.001000",
                "",
                Self.waiting,
                "",
            ])
    }

    @Test func costsByDayAndByModelSplitTheirLinesByWindow() throws {
        let workspace = try TemporaryWorkspace()
        let store = try Self.store(workspace)
        let byDay = try CostReport.make(store: store, by: .day, calendar: Self.utc).text
        #expect(
            byDay.hasSuffix(
                """
                by price window (models whose prices change with the clock):
                DAY         WINDOW    CALLS  COST
                2026-12-01  off-peak  1      $0.001000
                2026-11-30  off-peak  2      $0.004000
                2026-11-30  peak      1      $0.004000

                \(Self.waiting)

                """), "\(byDay)")
        // Berlin's day of 2026-12-01 begins at 23:00 UTC the day before: the 03:00 and 05:00 UTC
        // calls are the 30th's, like the rest.
        var berlin = Self.utc
        berlin.timeZone = try #require(TimeZone(identifier: "Europe/Berlin"))
        let shares = try store.ledger.windowShares(by: .day, calendar: berlin)
        #expect(
            shares.map { "\($0.key) \($0.window) \($0.calls)" } == [
                "2026-12-01 off-peak 1", "2026-11-30 off-peak 2", "2026-11-30 peak 1",
            ])
        let byModel = try CostReport.make(store: store, by: .model, calendar: Self.utc)
        #expect(
            byModel.windows?.map { "\($0.key) \($0.window) \($0.calls)" } == [
                "deepseek-flash off-peak 3", "deepseek-flash peak 1",
            ])
    }

    /// A call of work with several tags counts under each; the calls with none are a line of
    /// their own, so the lines say where every dollar of the total went.
    @Test func costsByTagCountEachTagsCalls() throws {
        let workspace = try TemporaryWorkspace()
        let report = try CostReport.make(store: try Self.store(workspace), by: .tag, calendar: Self.utc)
        #expect(
            report.text.components(separatedBy: "\n") == [
                "TAG            CALLS  INPUT  CACHE-READ  OUTPUT  COST       NAIVE      SAVED",
                "project:atlas  4      400    12          28      $0.0180    $0.0306    $0.0126",
                "customer:acme  3      300    9           21      $0.008000  $0.0136    $0.005600",
                "(no tag)       1      100    3           7       $0.001000  $0.001700  $0.000700",
                "total          5      500    15          35      $0.0190    $0.0323    $0.0133",
                "(a call made with several tags is in each of their lines)",
                "",
                "by price window (models whose prices change with the clock):",
                "WINDOW    CALLS  COST",
                "off-peak  3      $0.005000",
                "peak      1      $0.004000",
                "",
                Self.waiting,
                "",
            ])
    }

    @Test func theMetricsCountSpendByWindowAndByTag() throws {
        let workspace = try TemporaryWorkspace()
        let totals = try Self.store(workspace).ledger.workspaceTotals()
        let text = MetricsText(totals: totals, prices: .bundled, lastTick: nil).text
        let lines = text.components(separatedBy: "\n").filter {
            $0.hasPrefix("offpeak_window_") || $0.hasPrefix("offpeak_waiting_")
                || $0.hasPrefix("offpeak_tag_")
        }
        #expect(
            lines == [
                "offpeak_window_spent_dollars_total{window=\"off-peak\"} 0.005",
                "offpeak_window_spent_dollars_total{window=\"peak\"} 0.004",
                "offpeak_window_calls_total{window=\"off-peak\"} 3",
                "offpeak_window_calls_total{window=\"peak\"} 1",
                "offpeak_waiting_saved_dollars 0.004",
                "offpeak_tag_spent_dollars_total{tag=\"project:atlas\"} 0.018000000000000002",
                "offpeak_tag_spent_dollars_total{tag=\"customer:acme\"} 0.008",
            ], "\(text)")
    }

    /// Past the 20 dearest tags, the metrics sum the rest as one, so a tag per customer cannot grow
    /// the scrape without bound.
    @Test func theMetricsNameTheDearestTagsAndSumTheRest() {
        var tags: [CostLine] = []
        for index in 0..<23 {
            let entry = StoreCountersTests.ledger(
                run: "r", items: 1, hit: false, failed: false, dollars: Double(30 - index))
            var line = CostLine(key: "customer:c\(index)", spend: Spend())
            line.spend.add(entry)
            tags.append(line)
        }
        let samples = MetricsText.tagSamples(tags)
        #expect(samples.count == 21)
        #expect(samples.first?.0 == ["tag": "customer:c0"] && samples.first?.1 == 30)
        #expect(samples.last?.0 == ["tag": "(others)"] && samples.last?.1 == 10 + 9 + 8)
    }

    /// Rolling a pruned run's rows up keeps each window's and each tag's calls apart, and sums what
    /// waiting saved.
    @Test func aRolledUpLedgerKeepsWindowsTagsAndSavings() throws {
        let workspace = try TemporaryWorkspace()
        let store = try Self.store(workspace)
        let before = try CostReport.make(store: store, by: .tag, calendar: Self.utc).text
        try store.runs.insert(run: StoreTests.run("r-tides", job: "tides"), requests: [])
        try store.execute("UPDATE runs SET pruned_at = ? WHERE id = ?", [Date(), "r-tides"])
        let report = try store.ledger.rollUpLedger(
            runID: "r-tides", calendar: Self.utc, at: Date(), dryRun: false)
        #expect(report.rows == 3 && report.rowsLeft == 2, "\(report)")
        #expect(try CostReport.make(store: store, by: .tag, calendar: Self.utc).text == before)
        #expect(try store.ledger.waitingSavings() == WaitingSavings(calls: 2, dollars: 0.004))
    }

    @Test func aTagMustBeOneWord() throws {
        let error = #expect(throws: OffpeakError.self) {
            try JobSpecParser.parse(
                yaml:
                    "kind: prompt\ntemplate: \"{{item}}\"\ntags: [project:atlas, \"two words\"]\nitems: [a]\n",
                path: "jobs/t.yaml", workspace: URL(fileURLWithPath: "/tmp"))
        }
        #expect(
            error?.description
                == "jobs/t.yaml:3:23: tags[2]: tag two words holds a character other than letters, digits and "
                + "._:/@-; expected a tag like project:atlas")
        let spec = try JobSpecParser.parse(
            yaml: "kind: prompt\ntemplate: \"{{item}}\"\ntags: [project:atlas, customer:acme]\nitems: [a]\n",
            path: "jobs/t.yaml", workspace: URL(fileURLWithPath: "/tmp"))
        #expect(Tags.stored(spec.tags ?? []) == "customer:acme,project:atlas")
    }
}
