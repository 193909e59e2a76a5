import Foundation
import Logging
import OffpeakTestSupport
import Synchronization
import Testing

@testable import Offpeak

/// Many calls in flight (issue 11, items 1-3), against offpeak-sim over real HTTP: the answers are
/// a sequential run's, the provider's limits and the run's budgets hold with every call in flight
/// counted, and what was in flight when the run stopped is committed, not lost.
@Suite(.ownThreads) struct ConcurrentRunTests {
    static func workspace(sim: SimProcess, documents: Int, limits: String = "", extra: String = "") throws
        -> TemporaryWorkspace
    {
        let workspace = try JobRunnerIntegrationTests.workspace(sim: sim, documents: documents)
        try workspace.write(
            "offpeak.yaml",
            "provider: sim\nbase_url: \(sim.url)\nhttp: {connect_timeout: 2s, timeout: 10s, max_retries: 2}\n\(limits)"
        )
        if !extra.isEmpty {
            try workspace.write(
                "jobs/docs.yaml",
                "kind: summarize\ntier: fast\ninputs: [docs/*.md]\nmax_tokens: 200\nbatching: off\n\(extra)\n"
            )
        }
        return workspace
    }

    static func stat(_ sim: SimProcess, _ key: String) throws -> Int { try sim.stats()[key] as? Int ?? -1 }

    @Test func callsGoOutTogetherAndTheAnswersAreASequentialRunsAnswers() throws {
        let sim = try SimProcess(arguments: ["--latency-ms", "300"])
        let workspace = try Self.workspace(sim: sim, documents: 16)
        let outcome = try JobRunnerIntegrationTests.run(workspace)
        #expect(outcome.status == .ok)
        #expect(outcome.run.itemsDone == 16)
        let most = try Self.stat(sim, "max_in_flight")
        #expect(most > 1 && most <= 8, "eight at most in flight toward a remote-looking API; saw \(most)")
        #expect(try Self.stat(sim, "calls") == 16, "each document asked once")

        let sequentialSim = try SimProcess(arguments: ["--latency-ms", "10"])
        let sequential = try Self.workspace(
            sim: sequentialSim, documents: 16, limits: "limits: {sim: {in_flight: 1}}\n")
        #expect(try JobRunnerIntegrationTests.run(sequential).status == .ok)
        #expect(try Self.stat(sequentialSim, "max_in_flight") == 1)
        var answers = workspace.snapshot("out/docs")
        var expected = sequential.snapshot("out/docs")
        answers["index.json"] = nil  // it names the run
        expected["index.json"] = nil
        #expect(answers.count == 16 && answers == expected)
    }

    @Test func theConfiguredNumberInFlightIsNeverPassed() throws {
        let sim = try SimProcess(arguments: ["--latency-ms", "200"])
        let workspace = try Self.workspace(sim: sim, documents: 12, limits: "limits: {sim: {in_flight: 3}}\n")
        #expect(try JobRunnerIntegrationTests.run(workspace).status == .ok)
        #expect(try Self.stat(sim, "max_in_flight") == 3)
    }

    /// A refused key stops the run at the calls already in flight: none is sent again, nothing is
    /// billed, and no item is failed or dropped (the next run, with the key fixed, asks them all).
    @Test func aRefusedKeyStopsAtTheCallsInFlightWithNothingBilled() throws {
        let sim = try SimProcess(arguments: ["--require-key", "right-key"])
        let workspace = try Self.workspace(sim: sim, documents: 20)
        let outcome = try JobRunnerIntegrationTests.run(workspace)
        #expect(outcome.status == .configuration)
        let calls = try Self.stat(sim, "calls")
        #expect(calls >= 1 && calls <= 8, "at most the eight in flight; saw \(calls)")
        let billed = try sim.billed()
        #expect(outcome.spend.dollars == 0 && billed["input_tokens", default: 0] == 0)
        #expect(outcome.run.itemsDone == 0 && outcome.run.itemsFailed == 0 && outcome.run.itemsTotal == 20)
    }

    /// Budgets count the worst case of every call in flight: never one call over.
    @Test func aCallBudgetIsNeverPassedWithCallsInFlight() throws {
        let sim = try SimProcess(arguments: ["--latency-ms", "200"])
        let workspace = try Self.workspace(sim: sim, documents: 20, extra: "budget: {max_calls: 5}")
        let outcome = try JobRunnerIntegrationTests.run(workspace)
        #expect(outcome.status == .temporaryFailure)
        #expect(try Self.stat(sim, "calls") == 5)
        #expect(outcome.run.itemsDone == 5)
    }

    /// A call starts only if the budget holds its whole `max_tokens` on top of the worst case of
    /// every call already in flight; answers shorter than that let more calls through, never too many.
    @Test func aTokenBudgetIsNeverPassedWithCallsInFlight() throws {
        let sim = try SimProcess(arguments: ["--latency-ms", "200"])
        let workspace = try Self.workspace(
            sim: sim, documents: 20, extra: "budget: {max_output_tokens: 1000}")
        let outcome = try JobRunnerIntegrationTests.run(workspace)
        #expect(outcome.status == .temporaryFailure)
        #expect(outcome.run.budgetStop == "max_output_tokens")
        #expect((try sim.billed())["output_tokens"] ?? 0 <= 1000)
        #expect(outcome.run.itemsDone >= 5 && outcome.run.itemsDone < 20)
    }

    /// Unplugged while calls are in flight: no new call starts, and those already sent are
    /// committed, not lost.
    @Test func conditionsFailingMidRunCommitWhatWasInFlight() throws {
        let sim = try SimProcess(arguments: ["--latency-ms", "200"])
        let workspace = try Self.workspace(sim: sim, documents: 20, extra: "constraints: {power: ac}")
        let sysfs = try SwitchableSysfs("ac-wifi")
        let context = try JobRunnerIntegrationTests.context(workspace)
        let options = JobRunner.Options(
            progress: { progress in if progress.done >= 4 { try? sysfs.switchTo("battery-wifi") } },
            gate: context.gate(sysfsRoot: sysfs.root.path))
        let outcome = try context.run(try context.loadJob("docs"), options: options)
        #expect(outcome.status == .temporaryFailure)
        #expect(outcome.deferred == [.externalPower])
        #expect(outcome.run.itemsDone >= 4 && outcome.run.itemsDone < 20)
        #expect(outcome.run.itemsDone == (try Self.stat(sim, "calls")), "every answered call was committed")
    }

    /// The provider reports it has no requests left until its reset: offpeak waits for it rather
    /// than sending calls into 429s, and a tick whose window ends first stops cleanly. The bucket
    /// holds twelve; calls go out together (after the first, which measures the model for the
    /// window), and what their answers report, less what was sent since, lets exactly twelve through.
    @Test func aRateLimitIsWaitedForBeforeItIsHit() throws {
        let sim = try SimProcess(arguments: ["--rpm", "12", "--latency-ms", "200"])
        let workspace = try Self.workspace(sim: sim, documents: 20)
        let context = try JobRunnerIntegrationTests.context(workspace)
        let outcome = try context.run(
            try context.loadJob("docs"), options: JobRunner.Options(windowEnd: Date() + 3))
        #expect(outcome.status == .temporaryFailure)
        #expect(try Self.stat(sim, "rate_limited") == 0, "no call was sent into a 429")
        #expect(try Self.stat(sim, "max_in_flight") > 1)
        #expect(outcome.run.itemsDone == 12)
        #expect(
            outcome.message.contains("the provider's limit (requests per minute) holds the next call until "))
    }

    /// Within a window, the model's time per call must be known to tell whether a call fits: until
    /// an answer has measured it, calls go one at a time; then they go out together. The first
    /// answer's progress is read back from its commit when the second call, sent alone, comes back.
    @Test func withinAWindowTheFirstAnswerMeasuresBeforeOthersGo() throws {
        let sim = try SimProcess(arguments: ["--latency-ms", "300"])
        let workspace = try Self.workspace(sim: sim, documents: 12)
        let context = try JobRunnerIntegrationTests.context(workspace)
        let sentByFirstAnswer = Mutex<Int?>(nil)
        let options = JobRunner.Options(
            progress: { progress in
                guard progress.done == 1, let calls = try? sim.stats()["calls"] as? Int else { return }
                sentByFirstAnswer.withLock { $0 = $0 ?? calls }
            },
            windowEnd: Date() + 60)
        let outcome = try context.run(try context.loadJob("docs"), options: options)
        #expect(outcome.status == .ok)
        #expect(sentByFirstAnswer.withLock { $0 } == 2, "one call at a time until then")
        #expect(try Self.stat(sim, "max_in_flight") > 1, "then they went out together")
    }
}
