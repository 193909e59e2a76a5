import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Issue 26, item 2: the flex lane. OpenAI's flex processing (`service_tier: "flex"`) answers live
/// calls more slowly and sometimes refuses them for capacity, at the batch prices. `lane: flex`
/// takes it; `auto` takes it for deadlines from 15 minutes on where a batch does not fit; a
/// refusal is asked again later, or live when the deadline is near.
@Suite(.ownThreads) struct FlexLaneTests {
    static let openAI = OpenAIProvider(apiKey: "k", logger: Logger(label: "test"))
    static let anthropic = AnthropicProvider(apiKey: "k", logger: Logger(label: "test"))
    static let localServer = OpenAIProvider(
        apiKey: "k", baseURL: "http://127.0.0.1:8080/v1", logger: Logger(label: "test"))
    let now = Date()

    static func spec(lane: JobSpec.Lane?, deadline: TimeInterval? = nil) throws -> JobSpec {
        var spec = try BatchLaneChoiceTests.spec(lane: lane)
        spec.deadline = deadline
        return spec
    }

    func choose(
        _ spec: JobSpec, model: String = "gpt-5-mini", workspace: JobSpec.Lane = .auto,
        provider: any CompletionProvider = Self.openAI, left: TimeInterval? = nil
    ) -> LaneChoice {
        LaneChoice.choose(
            spec: spec, model: model, prices: .bundled, workspaceLane: workspace, provider: provider,
            deadlineAt: (left ?? spec.deadline).map { now + $0 }, now: now)
    }

    @Test func autoTakesFlexForADeadlineFromFifteenMinutesOnWhereNoBatchFits() throws {
        #expect(choose(try Self.spec(lane: nil)).lane == .live, "no deadline: live")
        #expect(choose(try Self.spec(lane: nil, deadline: 14 * 60)).lane == .live)
        #expect(choose(try Self.spec(lane: nil, deadline: 15 * 60)).lane == .flex)
        #expect(choose(try Self.spec(lane: nil, deadline: 6 * 3600)).lane == .flex)
        #expect(choose(try Self.spec(lane: nil, deadline: 48 * 3600)).lane == .batch, "a batch fits")
        // A run resumed with 20 hours left: no batch fits any more, flex does, and no note.
        let resumed = choose(try Self.spec(lane: nil, deadline: 48 * 3600), left: 20 * 3600)
        #expect(resumed.lane == .flex && resumed.why == nil)
        #expect(choose(try Self.spec(lane: nil, deadline: 3600), model: "gpt-4o-mini").lane == .live)
        #expect(choose(try Self.spec(lane: nil, deadline: 3600), provider: Self.anthropic).lane == .live)
        #expect(choose(try Self.spec(lane: nil, deadline: 3600), provider: Self.localServer).lane == .live)
        #expect(choose(try Self.spec(lane: nil, deadline: 3600), workspace: .live).lane == .live)
        #expect(choose(try Self.spec(lane: nil), workspace: .flex).lane == .flex)
        #expect(choose(try Self.spec(lane: nil, deadline: 48 * 3600), workspace: .flex).lane == .flex)
    }

    @Test func flexIsTakenAsAskedWhereTheModelTakesItAndTheDeadlineLeavesRoom() throws {
        #expect(choose(try Self.spec(lane: .flex)).lane == .flex)
        #expect(choose(try Self.spec(lane: .flex, deadline: 48 * 3600)).lane == .flex)
        #expect(choose(try Self.spec(lane: .flex), provider: Self.localServer).lane == .flex)
        let older = choose(try Self.spec(lane: .flex), model: "gpt-4o-mini")
        #expect(older.lane == .live)
        #expect(older.why == "gpt-4o-mini on openai has no flex processing; calls go live")
        let claude = choose(try Self.spec(lane: .flex), model: "claude-haiku-4-5", provider: Self.anthropic)
        #expect(claude.why == "claude-haiku-4-5 on anthropic has no flex processing; calls go live")
        let close = choose(try Self.spec(lane: .flex, deadline: 3600), left: 10 * 60)
        #expect(close.lane == .live)
        #expect(close.why?.hasSuffix("leaves no time for flex processing; calls go live") == true)
        // A model the price table gives flex prices takes it, whatever its name.
        var prices = PriceTable.bundled
        prices.models["my-proxy-model"] = ModelPrice(inputCostPerToken: 1e-6, outputCostPerToken: 2e-6)
        prices.models["flex-model"] = Self.flexPrice
        #expect(
            LaneChoice.choose(
                spec: try Self.spec(lane: .flex), model: "flex-model", prices: prices, workspaceLane: .auto,
                provider: Self.openAI, deadlineAt: nil, now: now
            ).lane == .flex)
        #expect(
            LaneChoice.choose(
                spec: try Self.spec(lane: .flex), model: "my-proxy-model", prices: prices,
                workspaceLane: .auto,
                provider: Self.openAI, deadlineAt: nil, now: now
            ).lane == .live)
    }

    static let flexPrice: ModelPrice = {
        var price = ModelPrice(
            inputCostPerToken: 1e-6, outputCostPerToken: 4e-6, inputCostPerTokenBatches: 5e-7,
            outputCostPerTokenBatches: 2e-6)
        price.inputCostPerTokenFlex = 4e-7
        price.outputCostPerTokenFlex = 1e-6
        return price
    }()

    @Test func flexCallsArePricedAtFlexPricesElseAtBatchPrices() throws {
        let usage = Usage(input: 1_000_000, output: 1_000_000)
        #expect(abs(Self.flexPrice.dollars(for: usage, lane: .flex) - 1.4) < 1e-9)
        #expect(abs(Self.flexPrice.dollars(for: usage, lane: .batch) - 2.5) < 1e-9)
        #expect(abs(Self.flexPrice.dollars(for: usage, lane: .live) - 5) < 1e-9)
        let mini = try #require(PriceTable.bundled.cost(of: "gpt-5-mini"))
        let cached = Usage(input: 1000, output: 500, cacheRead: 4000)
        #expect(abs(mini.dollars(for: cached, lane: .flex) - mini.dollars(for: cached, lane: .batch)) < 1e-15)
        let noFlex = ModelPrice(inputCostPerToken: 2e-6, outputCostPerToken: 8e-6)
        #expect(abs(noFlex.dollars(for: usage, lane: .flex) - 5) < 1e-9, "half the live price")
    }

    @Test func aFlexCallSaysServiceTierFlexAndALiveOneLeavesItOut() throws {
        let request = CompletionRequest(
            model: "gpt-5-mini", messages: [ChatMessage(role: .user, content: "hi")], maxTokens: 10)
        let flex = try Self.json(OpenAIProvider.requestBody(for: request, lane: .flex))
        #expect(flex["service_tier"] as? String == "flex")
        let live = try Self.json(OpenAIProvider.requestBody(for: request, lane: .live))
        #expect(live["service_tier"] == nil)
        #expect(throws: ProviderError.self) { try AnthropicProvider.requestBody(for: request, lane: .flex) }
    }

    @Test func aCapacityRefusalIsToldFromARateLimitAndDoesNotThrottle() {
        let refusal = ProviderError.http(status: 429, message: FlexLaneTests.refusalText)
        #expect(FlexProcessing.isCapacityRefusal(refusal))
        #expect(
            !FlexProcessing.isCapacityRefusal(ProviderError.http(status: 429, message: "Rate limit reached")))
        #expect(
            !FlexProcessing.isCapacityRefusal(
                ProviderError.http(status: 500, message: "resource unavailable")))
        #expect(FlexProcessing.isCapacityRefusal(errorCode: "resource_unavailable", message: "busy"))
        #expect(!CallOutcome.throttles(status: 429, errorCode: "resource_unavailable", message: "busy"))
        #expect(CallOutcome.throttles(status: 429, errorCode: "rate_limit_exceeded", message: "slow down"))
        #expect(FlexLane.refusalDelay(refusals: 1) == 60)
        #expect(FlexLane.refusalDelay(refusals: 3) == 240)
        #expect(FlexLane.refusalDelay(refusals: 20) == 900)
    }

    static let refusalText =
        "Resource Unavailable: flex processing has no capacity for this request right now"

    static func json(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    // MARK: - Runs against offpeak-sim in OpenAI's shape

    /// A workspace on OpenAI's shape against `sim`, with a job of `count` items.
    static func workspace(sim: SimProcess, count: Int, extra: String, http: String = "{}") throws
        -> TemporaryWorkspace
    {
        let workspace = try TemporaryWorkspace()
        try workspace.write(
            "offpeak.yaml",
            "provider: openai\nbase_url: \(sim.url)/v1\nmodels: {openai: {balanced: gpt-5-mini}}\nhttp: \(http)\n"
        )
        let items = (1...count).map { "  - {id: i\($0), item: \"Item \($0) of the flex run.\"}" }
        try workspace.write(
            "jobs/flex.yaml",
            "kind: prompt\ntemplate: \"Say {{item}}\"\nmax_tokens: 64\n\(extra)\nitems:\n"
                + items.joined(separator: "\n") + "\n")
        return workspace
    }

    static func run(_ workspace: TemporaryWorkspace) throws -> RunOutcome {
        try workspace.run(job: "flex", environment: ["OPENAI_API_KEY": "sk-test"])
    }

    /// `lane: flex` against a sim that refuses a quarter of the flex calls: every item answered,
    /// the refusals tried again, every call that answered booked in the flex lane at the batch
    /// prices, the refused ones at $0, and `costs` says what flex saved.
    @Test func aFlexRunAnswersEveryItemAtFlexPricesThroughRefusals() throws {
        let sim = try SimProcess(arguments: [
            "--require-key", "sk-test", "--flex-refuse-rate", "0.25", "--seed", "7", "--latency-ms", "20",
        ])
        let workspace = try Self.workspace(sim: sim, count: 12, extra: "lane: flex\nbatching: off")
        let outcome = try Self.run(workspace)
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.run.itemsDone == 12)
        let stats = try sim.stats()
        let flexCalls = try #require(stats["flex_calls"] as? Int)
        let refused = try #require(stats["flex_refused"] as? Int)
        #expect(refused > 0, "the seed refuses some")
        #expect(flexCalls == 12 + refused, "each refusal asked again, by the transport")

        let store = try workspace.openStore()
        #expect(
            try store.values("SELECT flex FROM ledger WHERE NOT failed ORDER BY id", as: Bool.self)
                == Array(repeating: true, count: 12))
        let price = try #require(PriceTable.bundled.cost(of: "gpt-5-mini"))
        let billed = Usage(
            input: outcome.spend.inputTokens, output: outcome.spend.outputTokens,
            cacheRead: outcome.spend.cacheReadTokens)
        #expect(abs(outcome.spend.dollars - price.dollars(for: billed, lane: .flex)) < 1e-12)
        #expect(abs(outcome.spend.dollars * 2 - price.dollars(for: billed, lane: .live)) < 1e-12)

        let report = try CostReport.make(store: store, by: .job)
        let flex = try #require(report.lanes?.flex)
        #expect(flex.spend.calls == 12 && flex.items == 12)
        #expect(report.lanes?.live.spend.calls == 0)
        #expect(abs((report.lanes?.savedByFlex ?? 0) - outcome.spend.dollars) < 1e-12, "half off")
        let cost = Money.dollars(flex.spend.dollars)
        #expect(
            report.lanes?.text == """
                LANE  CALLS  ITEMS  COST
                live  0      0      $0.00
                flex  12     12     \(cost)
                saved by the flex lane: \(Money.dollars(report.lanes?.savedByFlex ?? 0)) (the same usage at live \
                prices: \(Money.dollars(report.lanes?.flexAtLivePrices ?? 0)))

                """)
    }

    /// A flex call the provider answers at the default tier (its response says `service_tier:
    /// "default"`) is billed as it says, at the live prices, and booked in the live lane: the ledger
    /// is what the provider billed, not what was asked (issue 48, item 4).
    @Test func aFlexCallAnsweredAtTheDefaultTierIsBilledAsLive() throws {
        let sim = try SimProcess(arguments: [
            "--require-key", "sk-test", "--flex-as-default-rate", "0.5", "--seed", "7", "--latency-ms", "20",
        ])
        let workspace = try Self.workspace(sim: sim, count: 10, extra: "lane: flex\nbatching: off")
        let outcome = try Self.run(workspace)
        #expect(outcome.status == .ok, "\(outcome.message)")
        let stats = try sim.stats()
        let asDefault = try #require(stats["flex_as_default"] as? Int)
        #expect(stats["flex_calls"] as? Int == 10 && asDefault > 0 && asDefault < 10, "\(stats)")
        let store = try workspace.openStore()
        let flex = try store.values("SELECT flex FROM ledger ORDER BY id", as: Bool.self).compactMap { $0 }
        #expect(flex.count == 10 && flex.filter { !$0 }.count == asDefault, "\(flex)")
        // Each row at its own lane's prices: the live ones at twice the flex ones' for the same usage.
        let price = try #require(PriceTable.bundled.cost(of: "gpt-5-mini"))
        let rows = try store.values("SELECT dollars FROM ledger ORDER BY id", as: Double.self).compactMap {
            $0
        }
        let inputs = try store.values("SELECT input_tokens FROM ledger ORDER BY id", as: Int.self).compactMap
        { $0 }
        let outputs = try store.values("SELECT output_tokens FROM ledger ORDER BY id", as: Int.self)
            .compactMap { $0 }
        let cached = try store.values("SELECT cache_read_tokens FROM ledger ORDER BY id", as: Int.self)
            .compactMap { $0 }
        for index in rows.indices {
            let usage = Usage(input: inputs[index], output: outputs[index], cacheRead: cached[index])
            let expected = price.dollars(for: usage, lane: flex[index] ? .flex : .live)
            #expect(abs(rows[index] - expected) < 1e-15, "row \(index)")
        }
        #expect(CallLane.flex.billed(asReported: "default") == .live)
        #expect(CallLane.live.billed(asReported: "flex") == .flex)
        #expect(CallLane.flex.billed(asReported: "priority") == .flex)
        #expect(CallLane.batch.billed(asReported: "default") == .batch)
        #expect(CallLane.flex.billed(asReported: nil) == .flex)
    }

    /// Refused every time with the deadline far: the items wait a minute, their attempts as they
    /// were (the provider's want of room is not their fault), and the run says when they go again.
    @Test func aRefusalWithTheDeadlineFarAsksTheItemsAgainLaterWithoutChargingAnAttempt() throws {
        let sim = try SimProcess(arguments: ["--require-key", "sk-test", "--flex-refuse-rate", "1"])
        let workspace = try Self.workspace(
            sim: sim, count: 3, extra: "lane: flex\nbatching: off\ndeadline: 2h\nmax_attempts: 1",
            http: "{max_retries: 0}")
        let outcome = try Self.run(workspace)
        #expect(outcome.status == .temporaryFailure, "\(outcome.message)")
        #expect(outcome.run.itemsDone == 0 && outcome.run.itemsFailed == 0)
        let store = try workspace.openStore()
        let requests = try store.runs.requests(runID: outcome.run.id)
        #expect(requests.allSatisfy { $0.state == .retrying && $0.attempts == 0 })
        #expect(
            requests.allSatisfy {
                $0.error?.hasPrefix("flex processing refused it for capacity (provider answered HTTP 429")
                    == true
            })
        #expect(outcome.spend.calls == 3 && outcome.spend.dollars == 0)
        #expect(
            try store.values("SELECT flex FROM ledger WHERE failed", as: Bool.self) == [true, true, true])
        #expect((try sim.billed())["output_tokens"] == 0, "nothing billed")
    }

    /// Refused with the deadline near: the refused items, and the rest of the run, go live.
    @Test func aRefusalNearTheDeadlineSendsTheRestLive() throws {
        let sim = try SimProcess(arguments: ["--require-key", "sk-test", "--flex-refuse-rate", "1"])
        let workspace = try Self.workspace(
            sim: sim, count: 4, extra: "lane: flex\nbatching: off\ndeadline: 15m30s",
            http: "{max_retries: 0}\nlimits: {openai: {in_flight: 1}}")
        let outcome = try Self.run(workspace)
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.run.itemsDone == 4)
        let store = try workspace.openStore()
        #expect(
            try store.values("SELECT flex FROM ledger WHERE failed", as: Bool.self) == [true],
            "one refusal, then live")
        #expect(
            try store.values("SELECT flex FROM ledger WHERE NOT failed", as: Bool.self)
                == [false, false, false, false])
        let stats = try sim.stats()
        #expect(stats["flex_calls"] as? Int == 1 && stats["flex_refused"] as? Int == 1)
    }
}

extension FlexLaneTests {
    /// `estimate` shows the flex lane beside live and batch, marks it when the run would take it,
    /// and prices it at the flex prices (gpt-5-mini's: half the live ones).
    @Test func theEstimateShowsTheFlexLane() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, count: 5, extra: "deadline: 2h\nbatching: off")
        let context = try WorkspaceContext(
            workspace: Workspace(root: workspace.root), environment: try workspace.environment(),
            logger: Logger(label: "test"))
        let estimate = try context.estimate(try context.loadJob("flex"))
        #expect(estimate.lane == "live", "a server on this machine: auto keeps it live")
        let flex = try #require(estimate.flex)
        #expect(flex.calls == estimate.live.calls && flex.calls == 5)
        #expect(abs(flex.dollars * 2 - estimate.live.dollars) < 1e-12)

        try workspace.write("jobs/flex.yaml", try #require(workspace.read("jobs/flex.yaml")) + "lane: flex\n")
        let chosen = try context.estimate(try context.loadJob("flex"))
        #expect(chosen.lane == "flex" && chosen.dollars == flex.dollars)
        let lines = chosen.text.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("flex") }.map { $0.prefix(10) } == ["flex *  5 "])
        #expect(
            lines.contains(
                "time: flex processing answers more slowly than live, up to 15 minutes a call, and may "
                    + "refuse calls for capacity (asked again later, or live near the deadline); 5 calls, "
                    + "\(chosen.inFlight) at a time"))
    }
}
