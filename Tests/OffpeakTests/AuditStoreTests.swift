import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// The batch audit in the store (`AuditStore`, issue 25): an audit call's commit (its ledger row,
/// the audited item, the record, and when the single answer is kept, the item's result and cache
/// entry), answers reopened, and what `offpeak audit` reads. On the pass's engine (`TestStore`).
/// Dollars are binary fractions and times whole seconds, so both engines keep them exactly.
@Suite(.ownThreads) struct AuditStoreTests {
    typealias F = RoleFixtures
    static let t0 = F.t0
    static let reason = "the audit found job j's batched answers unreliable"

    /// One cache entry per key, `size` bytes of `fill` each.
    static func cache(_ keys: [String], size: Int = 100, fill: UInt8 = 7, at: Date = t0) -> CacheWrite {
        CacheWrite(
            records: keys.map { key in
                CacheEntryRecord(
                    key: key, kind: .answer, job: "j", provider: "sim", model: "m", url: nil, createdAt: at,
                    expiresAt: at + 3_600, lastAccessAt: at, hits: 0, rawBytes: size * 3, storedBytes: size,
                    payload: Data(repeating: fill, count: size), etag: nil, lastModified: nil)
            }, accesses: PendingAccesses.Batch(), maxBytes: 1 << 30)
    }

    /// A call's ledger row: not marked audit, so the tests see the commit mark it.
    static func call(run: String, job: String = "j", at: Date = t0, dollars: Double, failed: Bool = false)
        -> LedgerEntry
    {
        var entry = LedgerEntry(
            id: nil, at: at, job: job, runId: run, provider: "sim", model: "m", tier: "fast",
            downgraded: false,
            items: 1, inputTokens: failed ? 0 : 40, outputTokens: failed ? 0 : 8, cacheReadTokens: 0,
            cacheWriteTokens: 0, dollars: dollars, naiveDollars: 0, batchApi: false, cacheHit: false,
            usageEstimated: false, latencyMs: 30)
        entry.failed = failed
        entry.host = "box-a"
        return entry
    }

    /// `job`'s run `id` of `count` items, all answered by one batched call (ledger row 1 in a new
    /// store), each answer cached under its request's key; the commit ends segment 2.
    @discardableResult
    static func answeredRun(_ store: Store, id: String = "r1", job: String = "j", count: Int) throws
        -> [RequestRecord]
    {
        let requests = (0..<count).map { F.request("i\($0)", run: id, position: $0, job: job) }
        try store.runs.insert(run: F.run(id, job: job), requests: requests)
        let run = try #require(try store.runs.run(id: id))
        var ledger = call(run: id, job: job, dollars: 0.5)
        ledger.items = count
        ledger.naiveDollars = 1
        try store.runs.commitCall(
            run: run, ledger: ledger, results: requests.map { F.result($0) }, segment: 2,
            cache: cache(requests.map(\.cacheKey)))
        return requests
    }

    /// The audited item of `request`, asked alone at `at`, in a batch of three.
    static func row(_ request: RequestRecord, model: String = "m", at: Date, agreed: Bool) -> AuditRow {
        AuditRow(
            id: nil, at: at, job: request.job, runID: request.runId, requestID: request.id,
            itemID: request.itemId, provider: "sim", model: model, batchSize: 3,
            position: request.position + 1,
            agreed: agreed, similarity: agreed ? 0.875 : 0.25, batchedAnswer: "answer to \(request.itemId)",
            singleAnswer: "alone, \(request.itemId)", keptSingle: !agreed, ledgerID: nil, host: "box-a")
    }

    /// The record's change for one item of a batch of three.
    static func change(job: String = "j", model: String = "m", at: Date, agreed: Bool) -> AuditChange {
        AuditChange(job: job, provider: "sim", model: model, at: at) {
            $0.record(size: 3, position: 3, agreed: agreed, shape: "s", target: 0.8, at: at)
        }
    }

    /// An audit call's commit for `request`: its answer kept alone, with its result and cache entry,
    /// when it disagreed.
    static func audit(_ request: RequestRecord, model: String = "m", at: Date, agreed: Bool, dollars: Double)
        -> AuditCommit
    {
        var replacement: ResultRecord?
        var cache: CacheWrite?
        if !agreed {
            replacement = ResultRecord(
                requestId: request.id, runId: request.runId, text: "alone, \(request.itemId)",
                finishReason: "stop", model: model, fromCache: false, ledgerId: nil, inputTokens: 40,
                outputTokens: 8, dollars: dollars, createdAt: at, citations: "[]")
            cache = Self.cache([request.cacheKey], size: 60, fill: 9, at: at)
        }
        return AuditCommit(
            ledger: call(run: request.runId, job: request.job, at: at, dollars: dollars),
            row: row(request, model: model, at: at, agreed: agreed),
            change: change(job: request.job, model: model, at: at, agreed: agreed), replacement: replacement,
            cache: cache)
    }

    /// The tail's audited and agreeing items per batch size, as a record keeps them at `at` (to a
    /// thousandth: they fade, by a hundred-thousandth in a minute).
    static func tails(_ record: AuditRecord?, at: Date) -> [[Double]] {
        (record?.sizes ?? []).map { evidence in
            let tail = evidence.faded(to: at).tail
            return [Double(evidence.size), tail.audited, tail.agreed].map { ($0 * 1000).rounded() / 1000 }
        }
    }

    @Test func anAuditThatKeepsTheSingleAnswerReplacesTheResultAndTwoChangesAccumulate() throws {
        let workspace = try TemporaryWorkspace()
        let store = try workspace.openStore()
        let requests = try Self.answeredRun(store, count: 3)
        let before = try #require(try store.runs.run(id: "r1"))
        let checkpoint = try store.runs.checkpoint(runID: "r1")

        // i1's answers disagree: the single one replaces the batched one.
        let at = Self.t0 + 60
        let first = try #require(
            try store.audits.commitAudit(Self.audit(requests[1], at: at, agreed: false, dollars: 0.125)))
        #expect(Self.tails(first, at: at) == [[3, 1, 0]])
        #expect(first.shape == "s" && first.target == 0.8)
        #expect(first.updatedAt == at)
        #expect(try store.audits.auditRecord(job: "j", provider: "sim", model: "m") == first)
        #expect(try store.values("SELECT audit FROM ledger ORDER BY id", as: Bool.self) == [false, true])
        #expect(try store.values("SELECT naive_dollars FROM ledger ORDER BY id", as: Double.self) == [1, 0])
        #expect(try store.values("SELECT dollars FROM ledger ORDER BY id", as: Double.self) == [0.5, 0.125])
        let results = try store.runs.results(runID: "r1")
        #expect(
            results["r1/i1"]
                == ResultRecord(
                    requestId: "r1/i1", runId: "r1", text: "alone, i1", finishReason: "stop", model: "m",
                    fromCache: false, ledgerId: 2, inputTokens: 40, outputTokens: 8, dollars: 0.125,
                    createdAt: at, citations: "[]"))
        #expect(results["r1/i0"]?.text == "answer to i0" && results["r1/i0"]?.ledgerId == 1)
        #expect(try store.runs.requests(runID: "r1").map(\.state) == [.done, .done, .done])
        let after = try #require(try store.runs.run(id: "r1"))
        #expect(after.itemsDone == 3 && after.itemsDone == before.itemsDone && after.itemsCached == 0)
        #expect(try store.recountItems(runID: "r1") == ItemCounts(requests: 3, total: 3, done: 3))
        #expect(try store.runs.checkpoint(runID: "r1") == checkpoint, "the checkpoint is the call's")
        #expect(
            try store.values("SELECT payload FROM cache_entries WHERE key = ?", ["k-i1"], as: Data.self)
                == [Data(repeating: 9, count: 60)])
        #expect(try store.cacheTotals().storedBytes == 260)
        var expected = Self.row(requests[1], at: at, agreed: false)
        expected.id = 1
        expected.ledgerID = 2
        #expect(try store.audits.auditRows(job: "j") == [expected])

        // i2's answers agree: nothing of its result changes, and the record takes both items.
        let later = Self.t0 + 120
        let second = try #require(
            try store.audits.commitAudit(Self.audit(requests[2], at: later, agreed: true, dollars: 0.25)))
        #expect(Self.tails(second, at: later) == [[3, 2, 1]])
        #expect(second.updatedAt == later)
        #expect(try store.audits.auditRecords(job: "j") == [second])
        #expect(try store.runs.results(runID: "r1")["r1/i2"] == F.result(requests[2]).with(ledgerId: 1))
        #expect(try store.audits.auditRows(job: "j").map(\.ledgerID) == [2, 3])
        #expect(try store.audits.auditRows(job: "j").map(\.keptSingle) == [true, false])
        #expect(
            try store.values("SELECT audit FROM ledger ORDER BY id", as: Bool.self) == [false, true, true])
        #expect(try store.audits.replacedAnswers(job: "j", runID: "r1") == 1)
        #expect(try store.audits.replacedAnswers(job: "j", runID: "r2") == 0)
        #expect(try store.audits.replacedAnswers(job: "k", runID: "r1") == 0)
    }

    @Test func aFailedAuditCallIsALedgerRowAlone() throws {
        let workspace = try TemporaryWorkspace()
        let store = try workspace.openStore()
        try Self.answeredRun(store, count: 2)
        let failed = AuditCommit(ledger: Self.call(run: "r1", at: Self.t0 + 5, dollars: 0, failed: true))
        #expect(try store.audits.commitAudit(failed) == nil)
        #expect(try store.values("SELECT audit FROM ledger ORDER BY id", as: Bool.self) == [false, true])
        #expect(try store.values("SELECT failed FROM ledger ORDER BY id", as: Bool.self) == [false, true])
        #expect(try store.audits.auditRows(job: "j").isEmpty)
        #expect(try store.audits.auditRecords(job: nil).isEmpty)
        #expect(try store.audits.auditRecord(job: "j", provider: "sim", model: "m") == nil)
        var spend = Spend()
        spend.calls = 1
        spend.failedCalls = 1
        #expect(try store.audits.auditSpend(job: "j", runID: "r1") == spend)
        #expect(try store.runs.results(runID: "r1").values.map(\.ledgerId) == [1, 1])
    }

    @Test func reopeningSendsDoneAnswersBackWithoutTheirResultsOrCacheEntries() throws {
        let workspace = try TemporaryWorkspace()
        let store = try workspace.openStore()
        // i0 to i2 answered by one call; i3 failed for good, its key cached all the same (another
        // run's answer).
        let requests = (0..<4).map { F.request("i\($0)", run: "r1", position: $0) }
        try store.runs.insert(run: F.run("r1"), requests: requests)
        let run = try #require(try store.runs.run(id: "r1"))
        try store.runs.commitCall(
            run: run, ledger: Self.call(run: "r1", dollars: 0.5),
            results: requests.prefix(3).map { F.result($0) },
            segment: 2, cache: Self.cache(requests.prefix(3).map(\.cacheKey)))
        try store.runs.commitCall(
            run: run, ledger: nil, results: [], failed: [(requests[3].id, "400: bad request")], segment: 2,
            cache: Self.cache([requests[3].cacheKey], size: 40))
        let before = try #require(try store.runs.checkpoint(runID: "r1"))
        #expect(before.done == 3 && before.segment == 2 && before.lastRequestId == "r1/i3")

        let now = Self.t0 + 600
        let moved = try store.audits.reopen(
            runID: "r1", requests: [("r1/i0", "k-i0"), ("r1/i2", "k-i2"), ("r1/i3", "k-i3")],
            reason: Self.reason, now: now)
        #expect(moved == 2)
        let reopened = try store.runs.requests(runID: "r1")
        #expect(reopened.map(\.state) == [.pending, .done, .pending, .failed])
        #expect(reopened.map(\.error) == [Self.reason, nil, Self.reason, "400: bad request"])
        #expect(reopened.map(\.attempts) == [0, 0, 0, 1], "reopening counts no attempt")
        #expect(reopened[0].updatedAt == now && reopened[2].updatedAt == now)
        #expect(try store.runs.results(runID: "r1").keys.sorted() == ["r1/i1"])
        #expect(
            try store.values("SELECT key FROM cache_entries ORDER BY key", as: String.self) == [
                "k-i1", "k-i3",
            ])
        let totals = try store.cacheTotals()
        #expect(totals.entries == 2 && totals.storedBytes == 140 && totals.rawBytes == 420)
        let after = try #require(try store.runs.run(id: "r1"))
        #expect(after.itemsDone == 1 && after.itemsFailed == 1)
        #expect(
            try store.recountItems(runID: "r1") == ItemCounts(requests: 4, total: 4, done: 1, failed: 1))
        let checkpoint = try #require(try store.runs.checkpoint(runID: "r1"))
        #expect(checkpoint.done == 1 && checkpoint.segment == 2 && checkpoint.lastRequestId == "r1/i3")

        // Asked again: nothing is done any more, or the run is another.
        #expect(
            try store.audits.reopen(runID: "r1", requests: [("r1/i0", "k-i0")], reason: "again", now: now)
                == 0)
        #expect(
            try store.audits.reopen(runID: "r2", requests: [("r1/i1", "k-i1")], reason: "other", now: now)
                == 0)
        #expect(try store.audits.reopen(runID: "r1", requests: [], reason: "none", now: now) == 0)
        #expect(try store.runs.results(runID: "r1").keys.sorted() == ["r1/i1"])
        #expect(try store.runs.requests(runID: "r1").map(\.error)[0] == Self.reason)
        #expect(try store.cacheTotals().entries == 2)
    }

    /// The batch lane's audit: an audit request travels in the item's provider batch under its own
    /// custom id, is booked once (collecting the batch again books nothing), and the batch is not
    /// collected while it is unbooked.
    @Test func aBatchsAuditRequestIsBookedOnceAndHoldsTheBatchOpenUntilThen() throws {
        let workspace = try TemporaryWorkspace()
        let store = try workspace.openStore()
        let requests = (0..<3).map { F.request("i\($0)", run: "r1", position: $0) }
        try store.runs.insert(run: F.run("r1"), requests: requests)
        let batch = try store.batches.prepareBatch(
            runID: "r1", provider: "sim", model: "m", calls: [requests.map(\.id)],
            audits: [
                BatchAuditSlot(requestID: "r1/i2", size: 3, position: 3),
                BatchAuditSlot(requestID: "r1/i0", size: 3, position: 1),
            ], worstDollars: 1,
            worstTokens: (300, 60), host: "box-a", now: Self.t0)
        #expect(batch.requests == 3 && batch.items == 3)
        let customID = BatchRecord.auditCustomID(batchID: batch.id, index: 0)
        let expired = BatchRecord.auditCustomID(batchID: batch.id, index: 1)
        let audits = try store.batches.batchAudits(batchID: batch.id)
        #expect(
            audits.map(\.audit) == [
                BatchAuditRecord(
                    batchId: batch.id, customId: customID, requestId: "r1/i2", batchSize: 3, position: 3,
                    outcome: nil),
                BatchAuditRecord(
                    batchId: batch.id, customId: expired, requestId: "r1/i0", batchSize: 3, position: 1,
                    outcome: nil),
            ])
        #expect(audits.map(\.request.id) == ["r1/i2", "r1/i0"])

        var ledger = F.ledger(run: "r1", items: 3, dollars: 0.5)
        ledger.naiveDollars = 1
        let booked = try store.batches.commitBatchCalls(
            batchID: batch.id,
            [("\(batch.id)_0", .answered(ledger: ledger, results: requests.map { F.result($0) }))],
            run: F.run("r1"), lease: nil, now: Self.t0 + 60)
        #expect(booked == ["\(batch.id)_0"])
        #expect(try store.batches.markCollected(batchID: batch.id, now: Self.t0 + 60) == false)

        var commit = Self.audit(requests[2], at: Self.t0 + 61, agreed: false, dollars: 0.125)
        commit.slot = AuditCommit.Slot(batchID: batch.id, customID: customID, outcome: .succeeded)
        let record = try #require(try store.audits.commitAudit(commit))
        #expect(Self.tails(record, at: Self.t0 + 61) == [[3, 1, 0]])
        #expect(try store.audits.commitAudit(commit) == nil, "collected again: booked once")
        #expect(try store.values("SELECT audit FROM ledger ORDER BY id", as: Bool.self) == [false, true])
        #expect(try store.audits.auditRows(job: "j").count == 1)
        #expect(try store.runs.results(runID: "r1")["r1/i2"]?.text == "alone, i2")
        #expect(try store.batches.markCollected(batchID: batch.id, now: Self.t0 + 62) == false)

        // An audit request the batch did not answer books its outcome alone: no ledger row.
        let lost = AuditCommit(
            ledger: nil, slot: AuditCommit.Slot(batchID: batch.id, customID: expired, outcome: .expired))
        #expect(try store.audits.commitAudit(lost) == nil)
        #expect(try store.values("SELECT COUNT(*) FROM ledger", as: Int.self) == [2])
        #expect(
            try store.batches.batchAudits(batchID: batch.id).map(\.audit.outcome) == [.succeeded, .expired])
        #expect(try store.batches.markCollected(batchID: batch.id, now: Self.t0 + 62))
    }

    /// An audit a batched call's commit queues survives the pass that queued it: the next pass
    /// reads it with its request and the batched answer it checks; its commit takes it off the
    /// queue, once (a second process's commit of the same audit writes its ledger row alone); an
    /// answer asked again takes its queued audit with it.
    @Test func queuedAuditsWaitInTheStoreAndAreBookedOnce() throws {
        let workspace = try TemporaryWorkspace()
        let store = try workspace.openStore()
        let requests = (0..<4).map { F.request("i\($0)", run: "r1", position: $0) }
        try store.runs.insert(run: F.run("r1"), requests: requests)
        let run = try #require(try store.runs.run(id: "r1"))
        let queued = [
            QueuedAudit(requestID: "r1/i3", size: 4, position: 4, probe: true),
            QueuedAudit(requestID: "r1/i0", size: 4, position: 1, probe: true),
            QueuedAudit(requestID: "r1/i2", size: 4, position: 3, probe: false),
        ]
        var ledger = Self.call(run: "r1", dollars: 0.5)
        ledger.items = 4
        _ = try store.runs.commit(
            CallCommit(run: run, ledger: ledger, results: requests.map { F.result($0) }, audits: queued))
        let waiting = try store.audits.queuedAudits(runID: "r1")
        #expect(waiting.map(\.audit) == [queued[1], queued[2], queued[0]], "in item order")
        #expect(waiting.map(\.request.id) == ["r1/i0", "r1/i2", "r1/i3"])
        #expect(waiting.map(\.answer) == ["answer to i0", "answer to i2", "answer to i3"])
        #expect(try store.audits.queuedAudits(runID: "r2").isEmpty)

        var commit = Self.audit(requests[3], at: Self.t0 + 10, agreed: false, dollars: 0.125)
        commit.queued = "r1/i3"
        #expect(try store.audits.commitAudit(commit) != nil)
        #expect(try store.audits.queuedAudits(runID: "r1").map(\.request.id) == ["r1/i0", "r1/i2"])
        // Made by another process too: paid for, its ledger row kept, nothing else counted twice.
        #expect(try store.audits.commitAudit(commit) == nil)
        #expect(try store.values("SELECT COUNT(*) FROM ledger WHERE audit", as: Int.self) == [2])
        #expect(try store.audits.auditRows(job: "j").count == 1)
        #expect(try store.audits.replacedAnswers(job: "j", runID: "r1") == 1)

        try store.audits.reopen(runID: "r1", requests: [("r1/i2", "k-i2")], reason: Self.reason, now: Self.t0)
        #expect(try store.audits.queuedAudits(runID: "r1").map(\.request.id) == ["r1/i0"])
    }

    /// What a failed size leaves to ask again: the run's done answers from larger prompts to the
    /// model that no audit checked, not cache hits, not another model's, not an audit's own.
    @Test func uncheckedAnswersAreThoseOfLargerPromptsNoAuditChecked() throws {
        let workspace = try TemporaryWorkspace()
        let store = try workspace.openStore()
        let requests = try Self.answeredRun(store, count: 4)
        try store.audits.commitAudit(Self.audit(requests[1], at: Self.t0 + 10, agreed: true, dollars: 0.125))
        try store.audits.commitAudit(Self.audit(requests[3], at: Self.t0 + 20, agreed: false, dollars: 0.125))
        let unchecked = { (model: String, size: Int) throws -> [String] in
            try store.audits.uncheckedAnswers(runID: "r1", model: model, largerThan: size).map(\.id)
        }
        #expect(try unchecked("m", 3) == ["r1/i0", "r1/i2"])
        #expect(try unchecked("m", 4).isEmpty, "no prompt carried more than 4")
        #expect(try unchecked("m2", 1).isEmpty)
        #expect(
            try store.audits.uncheckedAnswers(runID: "r1", model: "m", largerThan: 1).map(\.cacheKey)
                == ["k-i0", "k-i2"])
        try store.audits.reopen(runID: "r1", requests: [("r1/i0", "k-i0")], reason: Self.reason, now: Self.t0)
        #expect(try unchecked("m", 1) == ["r1/i2"], "a request no longer done is not an answer")
    }

    @Test func rowsRecordsAndSpendAreReadPerJobAndRun() throws {
        let workspace = try TemporaryWorkspace()
        let store = try workspace.openStore()
        let r1 = try Self.answeredRun(store, id: "r1", count: 3)
        let r2 = try Self.answeredRun(store, id: "r2", count: 1)
        let r3 = try Self.answeredRun(store, id: "r3", job: "k", count: 1)
        // Committed out of order: rows read back oldest first, records most recently updated first.
        try store.audits.commitAudit(Self.audit(r2[0], at: Self.t0 + 30, agreed: true, dollars: 0.125))
        try store.audits.commitAudit(Self.audit(r1[0], at: Self.t0 + 10, agreed: true, dollars: 0.25))
        try store.audits.commitAudit(Self.audit(r3[0], at: Self.t0 + 20, agreed: false, dollars: 1))
        try store.audits.commitAudit(
            Self.audit(r1[2], model: "m2", at: Self.t0 + 40, agreed: false, dollars: 0.5))
        try store.audits.commitAudit(Self.audit(r1[1], at: Self.t0 + 15, agreed: true, dollars: 0.0625))

        let rows = try store.audits.auditRows(job: "j")
        #expect(rows.map(\.at) == [10, 15, 30, 40].map { Self.t0 + $0 })
        #expect(rows.map(\.requestID) == ["r1/i0", "r1/i1", "r2/i0", "r1/i2"])
        #expect(rows.map(\.id) == [2, 5, 1, 4])
        #expect(rows.map(\.ledgerID) == [5, 8, 4, 7], "ledger rows 1 to 3 are the runs' calls")
        var last = Self.row(r1[2], model: "m2", at: Self.t0 + 40, agreed: false)
        last.id = 4
        last.ledgerID = 7
        #expect(rows.last == last)
        #expect(rows.last?.similarity == 0.25 && rows.last?.position == 3 && rows.last?.batchSize == 3)
        #expect(try store.audits.auditRows(job: "k").map(\.requestID) == ["r3/i0"])
        #expect(try store.audits.auditRows(job: "none").isEmpty)

        let records = try store.audits.auditRecords(job: nil)
        #expect(records.map(\.job) == ["j", "k", "j"])
        #expect(records.map(\.model) == ["m2", "m", "m"])
        #expect(records.map(\.updatedAt) == [40, 20, 15].map { Self.t0 + $0 }, "j's m last changed at 15")
        #expect(
            records.map { Self.tails($0, at: Self.t0 + 40) } == [[[3, 1, 0]], [[3, 1, 0]], [[3, 3, 3]]])
        #expect(try store.audits.auditRecords(job: "j").map(\.model) == ["m2", "m"])
        #expect(try store.audits.auditRecords(job: "none").isEmpty)

        func spend(calls: Int, dollars: Double) -> Spend {
            var spend = Spend()
            spend.calls = calls
            spend.inputTokens = 40 * calls
            spend.outputTokens = 8 * calls
            spend.dollars = dollars
            return spend
        }
        #expect(try store.audits.auditSpend(job: "j", runID: "r1") == spend(calls: 3, dollars: 0.8125))
        #expect(try store.audits.auditSpend(job: "j", runID: "r2") == spend(calls: 1, dollars: 0.125))
        #expect(try store.audits.auditSpend(job: "j", runID: nil) == spend(calls: 4, dollars: 0.9375))
        #expect(try store.audits.auditSpend(job: "k", runID: nil) == spend(calls: 1, dollars: 1))
        #expect(try store.audits.auditSpend(job: "k", runID: "r1") == Spend())
        #expect(try store.audits.auditSpend(job: "none", runID: nil) == Spend())
        #expect(try store.audits.auditSpend(job: nil, runID: nil) == spend(calls: 5, dollars: 1.9375))
        // The audit calls are the run's real spend too (`run_spend`), with no naive call beside them.
        let run = try store.ledger.spend(runID: "r1")
        #expect(run.calls == 4 && run.dollars == 1.3125 && run.naiveDollars == 1)
    }
}

extension ResultRecord {
    /// The record paid for by ledger row `id`.
    fileprivate func with(ledgerId id: Int64?) -> ResultRecord {
        var record = self
        record.ledgerId = id
        return record
    }
}
