import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

#if canImport(Glibc)
import Glibc
#endif

/// The Prometheus metrics (issue 14, item 4): the text for a known store, its escaping, and the
/// file replaced whole.
@Suite(.ownThreads) struct MetricsTextTests {
    /// A store with a running run (two items answered by one call, one from the cache, one failed),
    /// a canceled run of two items, three deferred jobs, cache counters on two days and a provider
    /// batch out.
    static func knownStore(_ workspace: TemporaryWorkspace) throws -> Store {
        let store = try StoreTests.store(workspace)
        let requests = (0..<5).map { StoreTests.request("i\($0)", run: "r1", position: $0) }
        try store.runs.insert(run: StoreTests.run("r1", state: .running), requests: requests)
        let run = try #require(try store.runs.run(id: "r1"))
        try store.runs.commitCall(
            run: run,
            ledger: StoreCountersTests.ledger(run: "r1", items: 2, hit: false, failed: false, dollars: 0.5),
            results: [
                StoreCountersTests.result(requests[0], cached: false),
                StoreCountersTests.result(requests[1], cached: false),
            ], failed: [(requests[3].id, "refused")])
        try store.runs.commitCacheHits(
            run: run,
            [
                (
                    StoreCountersTests.ledger(run: "r1", items: 1, hit: true, failed: false, dollars: 0),
                    StoreCountersTests.result(requests[2], cached: true)
                )
            ], lease: RunHold(owner: "test", ttl: 60))
        try store.runs.insert(
            run: StoreTests.run("r2", job: "k", state: .canceled),
            requests: (0..<2).map { StoreTests.request("c\($0)", run: "r2", position: $0) })
        try store.schedules.deferJob(
            "a", run: nil, reasons: "waiting for external power; battery low", host: "test-host", at: Date())
        try store.schedules.deferJob("b", run: nil, reasons: "on battery", host: "test-host", at: Date())
        try store.schedules.deferJob("c", run: nil, reasons: "battery low", host: "test-host", at: Date())
        try store.schedules.deferJob(
            "d", run: nil,
            reasons:
                "daily budget reached, resumes after 00:00 ($0.2100 spent and $0.00 reserved of $0.4000, "
                + "and the next call may cost up to $0.2020)", host: "test-host", at: Date())
        try store.execute(
            """
            INSERT INTO cache_counters (day, kind, hits, misses)
            VALUES ('2026-01-01', 'answer', 3, 2), ('2026-01-02', 'answer', 1, 0), ('2026-01-02', 'source', 0, 4)
            """)
        let day = Date(timeIntervalSince1970: 1_767_312_000)  // 2026-01-02 00:00 UTC
        try store.execute(
            """
            INSERT INTO provider_batches (id, run_id, provider, model, state, prepared_at)
            VALUES ('ob000000000001', 'r1', 'sim', 'm', 'submitted', ?),
                ('ob000000000002', 'r1', 'sim', 'm', 'collected', ?)
            """, [day + 10 * 3600, day + 9 * 3600])
        return store
    }

    static let lastTick = LastTick(
        startedAt: Date(timeIntervalSince1970: 1_700_000_000.25), durationSeconds: 2.5, status: 75)

    @Test func rendersAKnownStoreExactly() throws {
        let workspace = try TemporaryWorkspace()
        let store = try Self.knownStore(workspace)
        let text = MetricsText(
            totals: try store.ledger.workspaceTotals(), prices: .bundled, lastTick: Self.lastTick
        )
        .text
        let expected = """
            # HELP offpeak_spent_dollars_total Dollars booked for provider calls, by lane; calls to a model with no price count 0 (see offpeak_unpriced_calls_total).
            # TYPE offpeak_spent_dollars_total counter
            offpeak_spent_dollars_total{lane="live"} 0.5
            offpeak_spent_dollars_total{lane="batch"} 0
            # HELP offpeak_naive_dollars_total What the same work would have cost the naive way: one live request per item, no cache, no batch discount.
            # TYPE offpeak_naive_dollars_total counter
            offpeak_naive_dollars_total 0.85
            # HELP offpeak_saved_dollars The naive cost less the dollars spent (negative when offpeak's way cost more).
            # TYPE offpeak_saved_dollars gauge
            offpeak_saved_dollars 0.35
            # HELP offpeak_batch_lane_saved_dollars What the batch lane saved: its usage at the live prices less what it was billed.
            # TYPE offpeak_batch_lane_saved_dollars gauge
            offpeak_batch_lane_saved_dollars 0
            # HELP offpeak_calls_total Provider calls made, by lane (answers from the cache are not calls).
            # TYPE offpeak_calls_total counter
            offpeak_calls_total{lane="live"} 1
            offpeak_calls_total{lane="batch"} 0
            # HELP offpeak_failed_calls_total Provider calls that brought back no answer.
            # TYPE offpeak_failed_calls_total counter
            offpeak_failed_calls_total 0
            # HELP offpeak_unpriced_calls_total Provider calls to a model with no price: their dollars are not in offpeak_spent_dollars_total.
            # TYPE offpeak_unpriced_calls_total counter
            offpeak_unpriced_calls_total 0
            # HELP offpeak_tokens_total Tokens billed, by kind (input not from the provider's prompt cache, cache reads, cache writes, output).
            # TYPE offpeak_tokens_total counter
            offpeak_tokens_total{kind="input"} 200
            offpeak_tokens_total{kind="cache_read"} 6
            offpeak_tokens_total{kind="cache_write"} 2
            offpeak_tokens_total{kind="output"} 21
            # HELP offpeak_items Items of every run by state: answered, failed for good, dropped by offpeak cancel, and open (still to answer).
            # TYPE offpeak_items gauge
            offpeak_items{state="done"} 3
            offpeak_items{state="failed"} 1
            offpeak_items{state="canceled"} 2
            offpeak_items{state="open"} 1
            # HELP offpeak_runs Runs by state.
            # TYPE offpeak_runs gauge
            offpeak_runs{state="idle"} 0
            offpeak_runs{state="running"} 1
            offpeak_runs{state="waiting"} 0
            offpeak_runs{state="interrupted"} 0
            offpeak_runs{state="completed"} 0
            offpeak_runs{state="failed"} 0
            offpeak_runs{state="canceled"} 1
            # HELP offpeak_deferred_jobs Jobs waiting in the deferred queue, by why (a job waiting for two reasons counts under each).
            # TYPE offpeak_deferred_jobs gauge
            offpeak_deferred_jobs{reason="external_power"} 1
            offpeak_deferred_jobs{reason="unmetered_network"} 0
            offpeak_deferred_jobs{reason="battery_low"} 2
            offpeak_deferred_jobs{reason="offline"} 0
            offpeak_deferred_jobs{reason="budget"} 1
            offpeak_deferred_jobs{reason="cheaper_prices"} 0
            offpeak_deferred_jobs{reason="conditions_unknown"} 0
            offpeak_deferred_jobs{reason="other"} 1
            # HELP offpeak_cache_hits_total Lookups the response cache answered, by kind.
            # TYPE offpeak_cache_hits_total counter
            offpeak_cache_hits_total{kind="answer"} 4
            offpeak_cache_hits_total{kind="source"} 0
            # HELP offpeak_cache_misses_total Lookups the response cache could not answer, by kind.
            # TYPE offpeak_cache_misses_total counter
            offpeak_cache_misses_total{kind="answer"} 2
            offpeak_cache_misses_total{kind="source"} 4
            # HELP offpeak_batches_in_flight Provider batches made and not yet collected.
            # TYPE offpeak_batches_in_flight gauge
            offpeak_batches_in_flight 1
            # HELP offpeak_last_tick_timestamp_seconds When the last offpeak tick started (Unix time).
            # TYPE offpeak_last_tick_timestamp_seconds gauge
            offpeak_last_tick_timestamp_seconds 1700000000.25
            # HELP offpeak_last_tick_duration_seconds How long the last offpeak tick took.
            # TYPE offpeak_last_tick_duration_seconds gauge
            offpeak_last_tick_duration_seconds 2.5
            # HELP offpeak_last_tick_exit_status The last offpeak tick's exit status (0 done, 75 work left for a later tick, others errors).
            # TYPE offpeak_last_tick_exit_status gauge
            offpeak_last_tick_exit_status 75

            """
        #expect(text == expected)
    }

    @Test func labelValuesAndHelpAreEscapedAndASeriesIsWrittenOnce() {
        var families = MetricsFamilies()
        families.add("x_total", .counter, "a \\ b\nc", [(["l": "q\"\\\nz"], 1), (["l": "q\"\\\nz"], 2)])
        families.add("x_total", .counter, "again", [([:], 3)])
        families.add("y", .gauge, "small", [([:], 0.000_012_5), ([:], 7)])
        #expect(
            families.text == """
                # HELP x_total a \\\\ b\\nc
                # TYPE x_total counter
                x_total{l="q\\"\\\\\\nz"} 1
                # HELP y small
                # TYPE y gauge
                y 1.25e-05

                """)
    }

    /// A context on `workspace`, whose offpeak.yaml writes the metrics to `m/offpeak.prom`.
    static func context(_ workspace: TemporaryWorkspace) throws -> WorkspaceContext {
        try workspace.write("offpeak.yaml", "provider: sim\nmetrics: {textfile: m/offpeak.prom}\n")
        try FileManager.default.createDirectory(
            at: workspace.root.appendingPathComponent("m"), withIntermediateDirectories: true)
        return try WorkspaceContext(
            workspace: Workspace(root: workspace.root), environment: try workspace.environment(),
            logger: Logger(label: "test"))
    }

    @Test func theFileIsReplacedWholeReadableByNodeExporterAndTheTickIsKept() throws {
        let workspace = try TemporaryWorkspace()
        let store = try Self.knownStore(workspace)
        let file = MetricsFile(context: try Self.context(workspace))
        #expect(file.write(tick: Self.lastTick) == nil)
        let expected = MetricsText(
            totals: try store.ledger.workspaceTotals(), prices: .bundled, lastTick: Self.lastTick
        ).text
        #expect(workspace.read("m/offpeak.prom") == expected)
        let attributes = try FileManager.default.attributesOfItem(
            atPath: workspace.root.path + "/m/offpeak.prom")
        #expect((attributes[.posixPermissions] as? Int) == 0o644)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: workspace.root.path + "/m") == [
                "offpeak.prom"
            ])
        // A later writer without a tick (a `run`) reports the last tick recorded.
        #expect(file.write() == nil)
        #expect(workspace.read("m/offpeak.prom") == expected)
        let state = try FileManager.default.attributesOfItem(
            atPath: workspace.root.path + "/cache/last-tick.json")
        #expect((state[.posixPermissions] as? Int) == 0o600)
    }

    @Test func aFailedWriteLeavesTheOldFileAndSaysWhy() throws {
        let workspace = try TemporaryWorkspace()
        _ = try Self.knownStore(workspace)
        let file = MetricsFile(context: try Self.context(workspace))
        #expect(file.write(tick: Self.lastTick) == nil)
        let before = try #require(workspace.read("m/offpeak.prom"))
        // This process's temporary file cannot be made: a folder stands where it would go.
        let url = try #require(file.url)
        let temporary = AtomicFile.temporaryURL(for: url, suffix: ".tmp")
        #expect(!temporary.lastPathComponent.hasSuffix(".prom"))
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: false)
        let later = LastTick(
            startedAt: Date(timeIntervalSince1970: 1_800_000_000), durationSeconds: 1, status: 0)
        #expect(file.write(tick: later) == "cannot write the metrics file m/offpeak.prom (Is a directory)")
        #expect(workspace.read("m/offpeak.prom") == before)
    }

    @Test func aWorkspaceWithNoStoreWritesNothingAndMakesNoStore() throws {
        let workspace = try TemporaryWorkspace()
        let file = MetricsFile(context: try Self.context(workspace))
        #expect(file.write() == nil)
        #expect(workspace.read("m/offpeak.prom") == nil)
        #expect(!FileManager.default.fileExists(atPath: workspace.root.path + "/cache"))
    }
}
