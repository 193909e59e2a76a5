import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// A problem that affects every call (issue 10, item 19): the same refusal call after call is the
/// configuration's, a server error that repeats is the provider's; neither is retried item by item.
@Suite(.ownThreads) struct FailureStreakTests {
    static let refused = ProviderError.http(status: 400, message: "Invalid model name passed in model=qwen")
    static let down = ProviderError.http(status: 500, message: "internal error")

    static func streak(_ error: ProviderError, calls: [[String]]) -> FailureStreak {
        var streak = FailureStreak()
        for requests in calls { streak.failed(error.description, requests: requests) }
        return streak
    }

    @Test func theSameRefusalForDifferentItemsIsTheConfiguration() {
        let three = Self.streak(Self.refused, calls: [["a"], ["b"], ["c"]])
        #expect(three.verdict(for: Self.refused, unanswered: 10) == .configuration)
        let two = Self.streak(Self.refused, calls: [["a"], ["b"]])
        #expect(two.verdict(for: Self.refused, unanswered: 10) == nil, "two items of ten may both be bad")
        #expect(two.verdict(for: Self.refused, unanswered: 2) == .configuration, "every item of the run")
        let batched = Self.streak(Self.refused, calls: [["a", "b", "c"], ["d", "e"]])
        #expect(batched.verdict(for: Self.refused, unanswered: 10) == .configuration)
    }

    @Test func oneItemRefusedAgainAndAgainIsTheItem() {
        let same = Self.streak(Self.refused, calls: [["a"], ["a"], ["a"], ["a"]])
        #expect(same.verdict(for: Self.refused, unanswered: 5) == nil)
        #expect(same.verdict(for: Self.refused, unanswered: 1) == nil)
    }

    @Test func differentRefusalsOrAnAnswerBetweenThemStartAgain() {
        var streak = Self.streak(Self.refused, calls: [["a"], ["b"]])
        let other = ProviderError.http(status: 400, message: "prompt is too long")
        streak.failed(other.description, requests: ["c"])
        #expect(streak.calls == 1 && streak.items == ["c"])
        #expect(streak.verdict(for: other, unanswered: 10) == nil)
        streak.answered()
        #expect(streak == FailureStreak())
    }

    @Test func aServerErrorThreeTimesInARowIsTheProvider() {
        let twice = Self.streak(Self.down, calls: [["a"], ["a"]])
        #expect(twice.verdict(for: Self.down, unanswered: 5) == nil)
        let thrice = Self.streak(Self.down, calls: [["a"], ["a"], ["a"]])
        #expect(thrice.verdict(for: Self.down, unanswered: 5) == .providerFailing)
        let limited = ProviderError.http(status: 429, message: "slow down")
        let waits = Self.streak(limited, calls: [["a"], ["b"], ["c"], ["d"]])
        #expect(
            waits.verdict(for: limited, unanswered: 9) == nil, "a rate limit is waited out, not a verdict")
    }

    @Test func theStreakTravelsInTheRunRow() throws {
        let streak = Self.streak(Self.refused, calls: [["r1"], ["r2", "r3", "r4"]])
        var run = RunRecord.new(
            job: JobSpec(name: "j", kind: .prompt, template: try Template("{{item}}"), output: "out/j"),
            provider: .sim, model: "m", itemsTotal: 0, at: Date())
        streak.store(in: &run)
        #expect(run.failureItems == "r1 r2 r3")
        #expect(FailureStreak(run: run) == streak)
    }

    // MARK: - Runs against the sim

    static func workspace(sim: SimProcess, items: Int) throws -> TemporaryWorkspace {
        let workspace = try JobRunnerIntegrationTests.workspace(sim: sim, documents: items, timeout: "5s")
        try workspace.write(
            "offpeak.yaml",
            "provider: sim\nbase_url: \(sim.url)\nhttp: {connect_timeout: 2s, timeout: 5s, max_retries: 0}\n")
        try workspace.oneCallInFlight()  // streaks are counted over calls made one after another
        return workspace
    }

    static func calls(_ sim: SimProcess) throws -> Int { try sim.stats()["calls"] as? Int ?? -1 }

    @Test func everyCallRefusedStopsTheRunAsConfigurationWithoutChargingTheItems() throws {
        let sim = try SimProcess(arguments: ["--fault-rate", "400=1"])
        let workspace = try Self.workspace(sim: sim, items: 6)
        let first = try JobRunnerIntegrationTests.run(workspace)
        #expect(first.status == .configuration)
        #expect(first.run.state == .interrupted, "resumable: the items wait for the fix")
        #expect(try Self.calls(sim) == 3, "three different items refused alike, then it stopped")
        #expect(
            first.message.hasPrefix(
                "job docs: the provider refused the last 3 calls alike, with different items: "))
        #expect(
            first.message.contains("that is the configuration (model name, key, base URL), not the items"))
        #expect(first.spend.calls == 3 && first.spend.failedCalls == 3)

        // Tick after tick: one call each, the same verdict at once, and no item burns its attempts.
        for tick in 1...4 {
            let again = try JobRunnerIntegrationTests.run(workspace)
            #expect(again.status == .configuration)
            #expect(try Self.calls(sim) == 3 + tick)
        }
        let store = try JobRunnerIntegrationTests.context(workspace).openStore()
        let requests = try store.runs.requests(runID: first.run.id)
        #expect(requests.allSatisfy { $0.state != .failed }, "no item failed for the configuration's fault")
        #expect(requests.map(\.attempts).max() ?? 0 <= 1)
    }

    @Test func aServerErrorEveryCallIsReportedAsTheProviderFailing() throws {
        let sim = try SimProcess(arguments: ["--fault-rate", "500=1"])
        let workspace = try Self.workspace(sim: sim, items: 3)
        var outcomes: [RunOutcome] = []
        for _ in 1...7 { outcomes.append(try JobRunnerIntegrationTests.run(workspace)) }
        #expect(outcomes.prefix(2).allSatisfy { $0.status == .temporaryFailure })
        #expect(outcomes.dropFirst(2).allSatisfy { $0.status == .unavailable })
        #expect(
            outcomes[2].message.hasPrefix(
                "job docs: the provider failed the last 3 calls alike: provider answered HTTP 500 to "
                    + "\(sim.url)/v1/messages: "))
        let store = try JobRunnerIntegrationTests.context(workspace).openStore()
        let requests = try store.runs.requests(runID: outcomes[0].run.id)
        #expect(
            requests.allSatisfy { $0.state == .pending }, "seven failed calls, max_attempts 5: none gave up")
        #expect(try store.runs.run(id: outcomes[0].run.id)?.state == .interrupted)
    }

    @Test func aRefusedKeyLeavesTheRunResumableAndTheFixFinishesIt() throws {
        let sim = try SimProcess(arguments: ["--require-key", "right-key"])
        let workspace = try JobRunnerIntegrationTests.workspace(sim: sim, documents: 2)
        try workspace.write("offpeak.yaml", "provider: anthropic\nbase_url: \(sim.url)\n")
        func run(key: String) throws -> RunOutcome {
            let context = try WorkspaceContext(
                workspace: Workspace(root: workspace.root),
                environment: try workspace.environment(["ANTHROPIC_API_KEY": key]),
                logger: Logger(label: "test"))
            return try context.run(try context.loadJob("docs"))
        }
        let refused = try run(key: "wrong-key")
        #expect(refused.status == .configuration)
        #expect(refused.run.state == .interrupted)
        let fixed = try run(key: "right-key")
        #expect(fixed.status == .ok)
        #expect(fixed.run.id == refused.run.id, "the same run, nothing dropped")
        #expect(fixed.run.itemsDone == 2)
    }
}
