import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Honest reports (issue 10, item 20): a loss shows as a negative saving, unpriced calls are not
/// shown as free, a failed call is a call made, and a provider's multi-line error stays in its row.
@Suite(.ownThreads) struct ReportTextTests {
    static func entry(
        model: String, run: String = "j-1", dollars: Double, naive: Double, input: Int = 100,
        output: Int = 10,
        failed: Bool = false, unpriced: Bool = false
    ) -> LedgerEntry {
        var entry = LedgerEntry(
            id: nil, at: Date(), job: "j", runId: run, provider: "sim", model: model, tier: "fast",
            downgraded: false, items: 1, inputTokens: failed ? 0 : input, outputTokens: failed ? 0 : output,
            cacheReadTokens: 0, cacheWriteTokens: 0, dollars: dollars, naiveDollars: naive, batchApi: false,
            cacheHit: false, usageEstimated: false, latencyMs: 5)
        entry.failed = failed
        entry.unpriced = unpriced
        return entry
    }

    static func store(_ workspace: TemporaryWorkspace, run: RunRecord, _ entries: [LedgerEntry]) throws
        -> Store
    {
        let store = try StoreTests.store(workspace)
        try store.runs.insert(run: run, requests: [])
        try store.insertLedger(entries)
        return store
    }

    @Test func costsShowALossUnpricedModelsAndFailedCalls() throws {
        let workspace = try TemporaryWorkspace()
        let store = try Self.store(
            workspace, run: StoreTests.run("j-1"),
            [
                Self.entry(model: "claude-haiku-4-5", dollars: 0.002, naive: 0.0015),
                Self.entry(model: "claude-haiku-4-5", dollars: 0.001, naive: 0.0005),
                Self.entry(model: "qwen-local", dollars: 0, naive: 0, unpriced: true),
                Self.entry(model: "qwen-local", dollars: 0, naive: 0, unpriced: true),
                Self.entry(model: "qwen-local", dollars: 0, naive: 0, failed: true, unpriced: true),
            ])
        let report = try CostReport.make(store: store, by: .model)
        #expect(
            report.text == """
                MODEL             CALLS         INPUT  CACHE-READ  OUTPUT  COST                  NAIVE                 SAVED
                claude-haiku-4-5  2             200    0           20      $0.003000             $0.002000             -$0.001000
                qwen-local        3 (1 failed)  200    0           20      unpriced              unpriced              unpriced
                total             5 (1 failed)  400    0           40      $0.003000 + unpriced  $0.002000 + unpriced  -$0.001000 + unpriced
                unpriced: 3 calls went to models with no price (qwen-local); their cost is not in these sums: add their prices (offpeak.yaml prices:, in LiteLLM's format)

                """)
        #expect(report.total.savedDollars < 0, "the JSON says the loss too")
        #expect(report.total.unpricedCalls == 3 && report.total.failedCalls == 1)
    }

    @Test func statusKeepsEachRunOnOneLineAndCountsEveryCall() throws {
        let workspace = try TemporaryWorkspace()
        var run = StoreTests.run("j-1", state: .failed)
        run.itemsTotal = 3
        run.itemsFailed = 3
        run.reason =
            "3 items failed; first: provider answered HTTP 400: line one\n  line two\n\tline three\u{1B}[31m"
        let store = try Self.store(
            workspace, run: run,
            (1...3).map { _ in Self.entry(model: "m", dollars: 0, naive: 0, failed: true) })
        let report = try StatusReport.make(store: store)
        #expect(
            report.text == """
                spend today: $0.00 in 3 calls (naive $0.00)
                RUN  STATE   ITEMS           CALLS         COST   WHY
                j-1  failed  0/3 (3 failed)  3 (3 failed)  $0.00  3 items failed; first: provider answered HTTP 400: line one line two line three [31m

                """)
        #expect(report.runs.first?.reason == run.reason, "the JSON keeps the whole text")
    }

    /// A run a process holds names the host it runs on (its lease's); one nobody holds, none.
    @Test func statusNamesTheHostRunningARun() throws {
        let workspace = try TemporaryWorkspace()
        var run = StoreTests.run("j-1", state: .running)
        run.itemsTotal = 2
        let store = try Self.store(workspace, run: run, [])
        var newer = StoreTests.run("j-2", state: .interrupted)
        newer.createdAt = run.createdAt + 60  // listed first, newest first
        try store.runs.insert(run: newer, requests: [])
        // Another machine's process: this one cannot see it, so its unexpired lease is live.
        #expect(
            try store.leases.acquireLease(runID: "j-1", owner: "box-a:4711", host: "box-a", ttl: 300) == nil)
        #expect(try store.leases.acquireLease(runID: "j-2", owner: "box-b:1", host: "box-b", ttl: -1) == nil)
        let report = try StatusReport.make(store: store)
        #expect(report.runs.map(\.host) == [nil, "box-a"])
        #expect(
            report.text == """
                spend today: $0.00 in 0 calls (naive $0.00)
                RUN  STATE             ITEMS  CALLS  COST   WHY
                j-2  interrupted       0/0    0      $0.00
                j-1  running on box-a  0/2    0      $0.00

                """)
    }

    @Test func aLongReasonIsShortenedInTheTableOnly() throws {
        let workspace = try TemporaryWorkspace()
        var run = StoreTests.run("j-1", state: .interrupted)
        run.reason = String(repeating: "x", count: 400)
        let store = try Self.store(workspace, run: run, [])
        let line = try #require(try StatusReport.make(store: store).text.split(separator: "\n").last)
        #expect(line.hasSuffix(String(repeating: "x", count: 159) + "…"))
    }

    @Test func tableCellsAreOneLine() {
        #expect(TextTable.oneLine("a\nb\r\n  c\t\td\u{2028}e\u{0}f") == "a b c d e f")
        #expect(TextTable.oneLine("  padded  ") == "padded")
        #expect(TextTable.oneLine("naïve — ok") == "naïve — ok")
        #expect(Money.dollars(-0.001) == "-$0.001000")
        #expect(Money.dollars(12.5) == "$12.50")
        #expect(Plural.count(1, "item") == "1 item" && Plural.count(0, "item") == "0 items")
    }
}
