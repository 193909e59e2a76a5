import Foundation
import Testing

@testable import Offpeak

/// The run's commit stage on its own (`CommitStage`): one commit on its way, read back once, and the
/// run's spend as the commits left it.
struct CommitStageTests {
    /// A commit that fails when it is read.
    struct FailedCommit: PendingCommit {
        func committed() throws(OffpeakError) -> CallCommit.Committed {
            throw OffpeakError(.temporaryFailure, "lost the connection")
        }
    }

    static func ledger(dollars: Double) -> LedgerEntry {
        LedgerEntry(
            id: nil, at: Date(), job: "j", runId: "r1", provider: "sim", model: "m", tier: "fast",
            downgraded: false, items: 1, inputTokens: 10, outputTokens: 5, cacheReadTokens: 0,
            cacheWriteTokens: 0, dollars: dollars, naiveDollars: dollars, batchApi: false, cacheHit: false,
            usageEstimated: false, latencyMs: 5)
    }

    static func committed(done: Int, dollars: Double) -> CallCommit.Committed {
        var run = StoreTests.run("r1", state: .running)
        run.itemsDone = done
        var spend = Spend()
        spend.calls = done
        spend.dollars = dollars
        return CallCommit.Committed(run: run, spend: spend, fitness: [:], evicted: 0)
    }

    @Test func aCommitIsReadOnceWithTheLessonItWasSentWith() throws {
        var stage = CommitStage()
        #expect(try stage.read() == nil, "nothing on its way")
        let lesson = FitnessLesson(
            change: FitnessChange(provider: "sim", model: "m", at: Date(), change: { _ in }), limitBefore: 8)
        try stage.sent(
            DoneCommit(value: Self.committed(done: 3, dollars: 0.5)), ledgers: [], lessons: [lesson], calls: 1
        )
        #expect(stage.isSending)
        let read = try #require(try stage.read())
        #expect(read.committed.run.itemsDone == 3)
        #expect(read.lessons.first?.limitBefore == 8)
        #expect(!stage.isSending)
        #expect(try stage.read() == nil, "read once")
    }

    @Test func aSecondCommitWaitsForTheFirstToBeRead() throws {
        var stage = CommitStage()
        try stage.sent(
            DoneCommit(value: Self.committed(done: 1, dollars: 0.1)), ledgers: [], lessons: [], calls: 1)
        let error = #expect(throws: OffpeakError.self) {
            try stage.sent(
                DoneCommit(value: Self.committed(done: 2, dollars: 0.2)), ledgers: [], lessons: [], calls: 1)
        }
        #expect(error?.status == .software)
        #expect(try stage.read()?.committed.run.itemsDone == 1, "the first is still the one on its way")
    }

    @Test func theSpendIsTheCommitsWithTheOneOnItsWayAdded() throws {
        var stage = CommitStage()
        #expect(stage.knownSpend == nil)
        // Unknown spend stays unknown: a row added to nothing would pass for the whole spend.
        try stage.sent(
            DoneCommit(value: Self.committed(done: 1, dollars: 1.0)), ledgers: [Self.ledger(dollars: 1.0)],
            lessons: [], calls: 1)
        #expect(stage.knownSpend == nil)
        _ = try stage.read()
        #expect(stage.knownSpend?.dollars == 1.0, "read back from the commit")
        try stage.sent(
            DoneCommit(value: Self.committed(done: 2, dollars: 3.0)), ledgers: [Self.ledger(dollars: 2.0)],
            lessons: [], calls: 1)
        #expect(stage.knownSpend?.dollars == 3.0, "the row on its way counted at once")
        #expect(stage.knownSpend?.calls == 2)
        stage.add(Self.ledger(dollars: 0.25))  // an audit call's row
        #expect(stage.knownSpend?.dollars == 3.25)
        _ = try stage.read()
        #expect(stage.knownSpend?.dollars == 3.0, "the store's sum replaces what was added")
        stage.forgetSpend()
        #expect(stage.knownSpend == nil)
    }

    @Test func aFailedCommitIsThrownOnceAndNoLongerOnItsWay() throws {
        var stage = CommitStage()
        stage.know(Spend())
        try stage.sent(FailedCommit(), ledgers: [Self.ledger(dollars: 1.0)], lessons: [], calls: 1)
        let error = #expect(throws: OffpeakError.self) { _ = try stage.read() }
        #expect(error?.status == .temporaryFailure)
        #expect(!stage.isSending)
        #expect(try stage.read() == nil)
    }
}
