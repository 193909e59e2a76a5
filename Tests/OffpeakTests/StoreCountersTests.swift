import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// The counters a commit reads instead of recounting (issue 11, item 6): a run's items by state,
/// a run's spend and the cache's bytes, kept by triggers, must equal a recount after any mix of
/// the writes offpeak makes (and a few it never makes).
@Suite(.ownThreads) struct StoreCountersTests {
    /// A seeded generator, so a failure replays.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func ledger(run: String, items: Int, hit: Bool, failed: Bool, dollars: Double) -> LedgerEntry {
        LedgerEntry(
            id: nil, at: Date(), job: "j", runId: run, provider: "sim", model: "m", tier: "fast",
            downgraded: false, items: items, inputTokens: hit ? 0 : 100 * items, outputTokens: 7 * items,
            cacheReadTokens: 3, cacheWriteTokens: 1, dollars: dollars, naiveDollars: dollars * 1.7,
            batchApi: false,
            cacheHit: hit, usageEstimated: false, latencyMs: 5, failed: failed, unpriced: !hit && items == 3)
    }

    static func result(_ request: RequestRecord, cached: Bool) -> ResultRecord {
        ResultRecord(
            requestId: request.id, runId: request.runId, text: "answer", finishReason: "stop", model: "m",
            fromCache: cached, ledgerId: nil, inputTokens: 10, outputTokens: 2, dollars: 0.001,
            createdAt: Date())
    }

    /// Every run's counters against a recount, and its spend against the ledger's sum.
    static func expectCountersMatch(_ store: Store, runs: [String], after step: String) throws {
        for run in runs {
            let (counted, recounted) = (
                try store.runs.itemCounts(runID: run), try store.recountItems(runID: run)
            )
            #expect(counted == recounted, "items of \(run) after \(step)")
            let spend = try store.ledger.spend(runID: run)
            var summed = try store.ledger.recountSpend(runID: run)
            #expect(abs(spend.dollars - summed.dollars) <= 1e-12 * max(1, abs(summed.dollars)))
            #expect(abs(spend.naiveDollars - summed.naiveDollars) <= 1e-12 * max(1, abs(summed.naiveDollars)))
            summed.dollars = spend.dollars
            summed.naiveDollars = spend.naiveDollars
            #expect(spend == summed, "spend of \(run) after \(step)")
        }
    }

    @Test func itemAndSpendCountersEqualARecountAfterAnyMixOfWrites() throws {
        // v6's triggers and partial index spell the step sources out: they must stay these.
        #expect(Set(RequestSource.steps.map(\.rawValue)) == ["chunk", "reduce"])
        #expect(SQLiteStore.specOrStepSQL == "source IN ('spec', 'chunk', 'reduce')")
        let workspace = try TemporaryWorkspace()
        let store = try StoreTests.store(workspace)
        var random = SplitMix(state: 11)
        try store.runs.insert(
            run: StoreTests.run("r1"),
            requests: (0..<30).map { StoreTests.request("i\($0)", run: "r1", position: $0) })
        var queued = StoreTests.run("r2", job: "q")
        queued.itemsTotal = 0
        var next = 100
        var seen: Set<String> = []
        for step in 0..<400 {
            let run = ["r1", "r2"].randomElement(using: &random) ?? "r1"
            let requests = try store.runs.requests(runID: run)
            let results = try store.runs.results(runID: run)
            let open = requests.filter { results[$0.id] == nil && [.pending, .retrying].contains($0.state) }
                .shuffled(using: &random)
            let record = try store.runs.run(id: run)
            let operation = Int.random(in: 0..<9, using: &random)
            switch operation {
            case 0, 1:  // a call: some answered, some asked again, some failed, some later
                guard let record, !open.isEmpty else { break }
                let chosen = Array(open.prefix(Int.random(in: 1...8, using: &random)))
                let parts = chosen.map { _ in Int.random(in: 0..<4, using: &random) }
                let pick = { (part: Int) in zip(chosen, parts).filter { $0.1 == part }.map(\.0) }
                try store.runs.commitCall(
                    run: record,
                    ledger: Self.ledger(
                        run: run, items: chosen.count, hit: false, failed: pick(0).isEmpty,
                        dollars: Double.random(in: 0..<0.01, using: &random)),
                    results: pick(0).map { Self.result($0, cached: false) },
                    retry: pick(1).map { ($0.id, "batched answer: missing") },
                    failed: pick(2).map { ($0.id, "HTTP 400") },
                    later: pick(3).map { ($0.id, "HTTP 529", Date() + 60) },
                    lease: RunHold(owner: "test", ttl: 60))
                let saved = try #require(try store.runs.run(id: run))
                let recount = try store.recountItems(runID: run)
                let written: [Int] = [saved.itemsDone, saved.itemsFailed, saved.itemsCached]
                #expect(written == [recount.done, recount.failed, recount.cached])
            case 2:  // answers from the cache
                guard let record, !open.isEmpty else { break }
                try store.runs.commitCacheHits(
                    run: record,
                    open.prefix(3).map {
                        (
                            Self.ledger(run: run, items: 1, hit: true, failed: false, dollars: 0),
                            Self.result($0, cached: true)
                        )
                    }, lease: RunHold(owner: "test", ttl: 60))
            case 3:  // the spec changed: some items kept (a payload changed), some dropped, some new
                guard run == "r1" else { break }
                let kept = requests.filter { $0.source == .spec && Bool.random(using: &random) }
                next += 2
                let planned =
                    kept.map {
                        StoreTests.request($0.itemId, run: "r1", position: $0.position, payload: "v\(step)")
                    }
                    + [
                        StoreTests.request("i\(next)", run: "r1", position: next),
                        StoreTests.request("i\(next + 1)", run: "r1", position: next + 1),
                    ]
                try store.runs.merge(requests: planned, into: "r1")
            case 4:  // long items' steps: new ones, one gone, one promoted, one failed
                _ = try store.runs.advanceSteps(runID: run) { rows, _ in
                    var changes = StepChanges()
                    for n in 0..<3 {
                        var stepRow = StoreTests.request("s\(step)-\(n)", run: run, position: 1000 + step)
                        stepRow.source =
                            n == 2 ? .reduce : .chunk
                        stepRow.state = n == 1 ? .done : .pending
                        changes.insert.append(stepRow)
                    }
                    let steps = rows.filter { $0.source.isStep }
                    if let gone = steps.randomElement(using: &random) { changes.delete.append(gone.id) }
                    if let promoted = rows.randomElement(using: &random) {
                        changes.promote.append((promoted.id, "final", "k2"))
                    }
                    if let failed = rows.randomElement(using: &random) {
                        changes.fail.append((failed.id, "step failed"))
                    }
                    return changes
                }
            case 5:  // submitted requests, one of them an id given before
                next += 3
                var batch = (0..<3).map { StoreTests.request("q\(next + $0)", run: "", position: 0) }
                for index in batch.indices { batch[index].source = .submit }
                if let old = requests.first {
                    batch.append(StoreTests.request(old.itemId, run: "", position: 0))
                }
                _ = try store.submissions.enqueue(batch, job: "q", newRun: queued)
            case 6:  // a request deleted (its result goes with it)
                guard let victim = requests.randomElement(using: &random) else { break }
                try store.execute("DELETE FROM requests WHERE id = ?", [victim.id])
            case 7:  // a result deleted, or its cache flag flipped, behind offpeak's back
                guard let answer = results.values.randomElement(using: &random) else { break }
                if Bool.random(using: &random) {
                    try store.execute("DELETE FROM results WHERE request_id = ?", [answer.requestId])
                } else {
                    try store.execute(
                        "UPDATE results SET from_cache = NOT from_cache WHERE request_id = ?",
                        [answer.requestId])
                }
            default:  // a request becomes a step, or a step an item; a ledger row changes
                if let row = requests.randomElement(using: &random) {
                    try store.execute(
                        "UPDATE requests SET source = ? WHERE id = ?",
                        [row.source == .chunk ? "spec" : "chunk", row.id])
                }
                try store.execute(
                    "UPDATE ledger SET cache_hit = NOT cache_hit, input_tokens = input_tokens + 1 WHERE id = "
                        + "(SELECT MAX(id) FROM ledger WHERE run_id = ?)", [run])
            }
            try Self.expectCountersMatch(
                store, runs: ["r1", "r2"], after: "step \(step) (operation \(operation))")
            let counts = try store.runs.itemCounts(runID: "r1")
            seen.formUnion(
                zip(
                    ["done", "failed", "cached", "steps"],
                    [counts.done, counts.failed, counts.cached, counts.requests - counts.total]
                )
                .filter { $0.1 > 0 }.map(\.0))
        }
        #expect(seen == ["done", "failed", "cached", "steps"], "the mix never reached some counts")
    }
}
