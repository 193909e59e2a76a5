import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Issue 50, item 3: a provider that speaks OpenAI's files and batches API gets the batch lane by
/// declaring it. Groq, under `/openai/v1`, with its Batch API at 25% off; and OpenAI's own Batch API
/// only where it is (OpenAI's host, or a server `batch_api: true` declares).
@Suite(.ownThreads, .serialized) struct GroqBatchTests {
    @Test func groqAsksForJSONModeLiveAndInItsBatchesAndPricesBatchesAtAQuarterOff() throws {
        var request = CompletionRequest(
            model: "llama-3.1-8b-instant", system: "Answer in JSON.",
            messages: [.init(role: .user, content: "hi")], maxTokens: 100)
        request.answerKeys = ["a", "b"]
        let body = try GroqProvider.requestBody(for: request)
        let json = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(json["response_format"] as? [String: String] == ["type": "json_object"])

        let groq = ProviderKind.groq
        #expect(groq.capabilities.environment.key == "GROQ_API_KEY")
        #expect(groq.capabilities.environment.defaultBaseURL == "https://api.groq.com/openai/v1")
        let made = groq.make(
            apiKey: "k", baseURL: GroqProvider.defaultBaseURL, options: ProviderOptions(),
            logger: Logger(label: "test"))
        #expect(made.batches is OpenAIBatches && made.kind == .groq)

        for model in ["llama-3.1-8b-instant", "llama-3.3-70b-versatile"] {
            let price = try #require(PriceTable.bundled.cost(of: model))
            let usage = Usage(input: 1_000_000, output: 1_000_000)
            let live = price.dollars(for: usage, lane: .live)
            #expect(live > 0)
            #expect(abs(price.dollars(for: usage, lane: .batch) - 0.75 * live) < 1e-12, "\(model)")
        }
    }

    @Test func whereEachProvidersBatchAPIIs() {
        let openAI = ProviderKind.openai.capabilities
        #expect(openAI.hasBatchAPI(at: "https://api.openai.com/v1", declared: nil))
        #expect(!openAI.hasBatchAPI(at: "http://127.0.0.1:4000/v1", declared: nil))
        #expect(openAI.hasBatchAPI(at: "http://127.0.0.1:4000/v1", declared: true))
        #expect(!openAI.hasBatchAPI(at: "https://api.openai.com/v1", declared: false))
        let anthropic = ProviderKind.anthropic.capabilities
        #expect(anthropic.hasBatchAPI(at: "https://proxy.example/anthropic", declared: nil))
        #expect(!anthropic.hasBatchAPI(at: "https://proxy.example/anthropic", declared: false))
        #expect(
            ProviderKind.groq.capabilities.hasBatchAPI(at: "http://127.0.0.1:8080/openai/v1", declared: nil))
    }

    /// A Groq-shaped batch through the OpenAI-shaped lane: the files and batches under `/openai/v1`,
    /// the results read as OpenAI's, every answer booked once at Groq's batch prices, equal to what
    /// the sim billed, and the answers the live lane gives.
    @Test func aGroqBatchIsSubmittedCollectedAndBookedAtGroqsBatchPrices() throws {
        let sim = try SimProcess(arguments: BatchLaneTests.simArguments("groq", ["--batch-delay", "1"]))
        let workspace = try BatchLaneTests.workspace(sim, count: 40, provider: "groq")
        let key = BatchLaneTests.keys["groq"] ?? [:]
        let run = try workspace.offpeak(["run", "classify"], environment: key)
        #expect(run.status == 75, "\(run.stderr)")
        #expect(
            run.stdout == """
                job classify: 0 of 40 items answered (0 now); 40 items in a provider batch (submitted 40 now, \
                collect with the next tick, or `offpeak run --wait`)
                outputs: out/classify/
                cost: $0.00 for 0 calls, 0 input and 0 output tokens (naive $0.00, saved $0.00)

                """)
        let store = try workspace.openStore()
        let batch = try #require(try store.batches.openBatches().first)
        #expect(batch.provider == "groq" && batch.model == "llama-3.3-70b-versatile")

        BatchLaneTests.waitForTheBatchToEnd()
        let tick = try workspace.offpeak(["tick"], environment: key)
        #expect(tick.status == 0, "\(tick.stderr)")
        #expect(tick.stdout == "classify [resume]: job classify: 40 of 40 items answered (40 now)\n")
        #expect(try BatchLaneTests.batchCounts(sim)["created"] == 1)
        #expect(try store.count("ledger", where: "NOT batch_api") == 0)
        let billed = try BatchLaneTests.simBilledDollars(sim, model: batch.model)
        #expect(billed > 0)
        #expect(abs(try BatchLaneTests.ledgerDollars(store) - billed) < 1e-12)
        let costs = try workspace.offpeak(["costs", "--by", "model"])
        // A quarter off: $0.000238 saved of $0.000953.
        #expect(
            costs.stdout == """
                MODEL                    CALLS  INPUT  CACHE-READ  OUTPUT  COST       NAIVE      SAVED
                llama-3.3-70b-versatile  40     1080   0           400     $0.000715  $0.000953  $0.000238
                total                    40     1080   0           400     $0.000715  $0.000953  $0.000238

                LANE   CALLS  ITEMS  COST
                live   0      0      $0.00
                batch  40     40     $0.000715
                saved by the batch lane: $0.000238 (the same usage at live prices: $0.000953)

                """)

        let liveSim = try SimProcess(arguments: BatchLaneTests.simArguments("groq", []))
        let live = try BatchLaneTests.workspace(liveSim, count: 40, lane: "live", provider: "groq")
        #expect(try live.offpeak(["run", "classify"], environment: key).status == 0)
        #expect(BatchLaneTests.answers(workspace).count == 40)
        #expect(BatchLaneTests.answers(workspace) == BatchLaneTests.answers(live))
    }

    /// `provider: openai` at a server that is not OpenAI (a loopback sim here) declares no Batch API:
    /// `lane: batch` runs live, and `estimate` says why; `batch_api: true` opens the lane.
    @Test func openAIsBatchLaneOpensAtAnotherServerOnlyWhenDeclared() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "1"])
        let key = BatchLaneTests.keys["openai"] ?? [:]
        let undeclared = try BatchLaneTests.workspace(base: sim.url + "/v1", provider: "openai", count: 3)
        let estimate = try undeclared.offpeak(["estimate", "classify"], environment: key)
        #expect(
            estimate.stdout.split(separator: "\n").contains(
                "* the lane the run takes: no batch API is declared for openai at \(sim.url)/v1 (`batch_api: "
                    + "true` in offpeak.yaml declares one); calls go live"), "\(estimate.stdout)")
        #expect(try undeclared.offpeak(["run", "classify"], environment: key).status == 0)
        #expect(try BatchLaneTests.batchCounts(sim)["created"] == 0)

        let declared = try BatchLaneTests.workspace(sim, count: 3, provider: "openai")
        #expect(try declared.offpeak(["run", "classify"], environment: key).status == 75)
        #expect(try BatchLaneTests.batchCounts(sim)["created"] == 1)
    }
}
