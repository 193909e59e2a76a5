import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Batching against a model that cannot answer batched prompts (offpeak-sim `--weak-model`):
/// structured output holds it to the shape; without it, adaptive batching stops wasting calls.
@Suite(.ownThreads) struct AdaptiveBatchingTests {
    static func workspace(sim: SimProcess, count: Int, settings: String, provider: String = "sim") throws
        -> TemporaryWorkspace
    {
        let workspace = try BatchedRunTests.workspace(sim: sim, count: count, batching: "{max_items: 8}")
        let base = provider == "sim" ? sim.url : sim.url + "/v1"
        var config = "provider: \(provider)\nbase_url: \(base)\nhttp: {max_retries: 1}\n\(settings)\n"
        if provider == "openai" { config += "models: {openai: {fast: claude-haiku-4-5}}\n" }
        try workspace.write("offpeak.yaml", config)
        return workspace
    }

    static func run(_ workspace: TemporaryWorkspace) throws -> RunOutcome {
        let context = try WorkspaceContext(
            workspace: Workspace(root: workspace.root),
            environment: try workspace.environment(["OPENAI_API_KEY": "none"]),
            logger: .init(label: "test"))
        return try context.run(try context.loadJob("classify"))
    }

    static func batchedCalls(_ sim: SimProcess) throws -> Int {
        (try sim.stats()["batched_calls"] as? NSNumber)?.intValue ?? -1
    }

    @Test func structuredOutputMakesAWeakModelAnswerEveryBatchedPrompt() throws {
        let perfect = try SimProcess()
        let reference = try Self.workspace(sim: perfect, count: 40, settings: "")
        let expected = try Self.run(reference)
        #expect(expected.spend.calls == 5)
        let weak = try SimProcess(arguments: ["--weak-model", "--seed", "3"])
        let workspace = try Self.workspace(sim: weak, count: 40, settings: "structured_output: on")
        let outcome = try Self.run(workspace)
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.spend.calls == 5, "as many calls as the perfect model")
        #expect(BatchedRunTests.answers(workspace) == BatchedRunTests.answers(reference))
    }

    @Test func withoutItAWeakModelsItemsGoAloneAfterTwoEmptyPromptsAndOnTheNextRunAtOnce() throws {
        let sim = try SimProcess(arguments: ["--weak-model", "--seed", "3"])
        let perfect = try SimProcess()
        let reference = try BatchedRunTests.workspace(sim: perfect, count: 40, batching: "off")
        _ = try BatchedRunTests.run(reference)
        let workspace = try Self.workspace(sim: sim, count: 40, settings: "structured_output: off")
        try workspace.oneCallInFlight()
        let outcome = try Self.run(workspace)
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.run.itemsDone == 40)
        #expect(try Self.batchedCalls(sim) == 2, "two prompts that kept nothing, then no more")
        #expect(outcome.spend.calls == 42, "halving to single items would have made 5 + 10 + 20 + 40 calls")
        #expect(BatchedRunTests.answers(workspace) == BatchedRunTests.answers(reference))
        let store = try workspace.openStore()
        let fitness = try #require(try store.batches.batchFitness(provider: "sim", model: "claude-haiku-4-5"))
        #expect(fitness.prompts == 2 && fitness.itemsKept == 0)
        #expect(fitness.itemsAsked > 8 && fitness.itemsAsked <= 12, "a prompt of 8, then a smaller one")
        #expect(
            fitness.rejections.values.reduce(0, +) == fitness.itemsAsked,
            "each rejected item is counted with its reason")
        #expect(fitness.itemLimit(at: Date()) == 1)

        // The next run remembers: no batched prompt at all while the pause lasts.
        let spec = try #require(workspace.read("jobs/classify.yaml"))
        try workspace.write("jobs/classify.yaml", spec.replacingOccurrences(of: "Ticket", with: "Case"))
        let again = try Self.run(workspace)
        #expect(again.spend.calls == 40)
        #expect(try Self.batchedCalls(sim) == 2)
    }

    @Test func aServerThatRefusesTheFormIsRememberedNotAskedPerCall() throws {
        let sim = try SimProcess(arguments: ["--refuse-json-schema"])
        let workspace = try Self.workspace(
            sim: sim, count: 40, settings: "limits: {openai: {in_flight: 1}}", provider: "openai")
        let outcome = try Self.run(workspace)
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.run.itemsDone == 40)
        #expect(outcome.spend.failedCalls == 1, "one refusal, then every prompt without the form")
        #expect(outcome.spend.calls == 6)
        let store = try workspace.openStore()
        let fitness = try #require(
            try store.batches.batchFitness(provider: "openai", model: "claude-haiku-4-5"))
        #expect(fitness.refusesStructured(at: Date()))
        #expect(
            fitness.structuredRefusal
                == "400: this server does not support structured output (response_format json_schema, tool_choice)"
        )
    }

    /// llama-cpp-python's server refuses `json_schema` with a 500. The transport retries 500s, but
    /// not this one: one HTTP call, not three, then the items go again without the form.
    @Test func aFiveHundredRefusalOfTheFormIsNotRetried() throws {
        let sim = try SimProcess(arguments: ["--refuse-json-schema", "--structured-refusal-status", "500"])
        let workspace = try Self.workspace(
            sim: sim, count: 40, settings: "limits: {openai: {in_flight: 1}}", provider: "openai")
        let outcome = try Self.run(workspace)
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.run.itemsDone == 40)
        #expect(outcome.spend.failedCalls == 1)
        #expect(
            (try sim.stats()["calls"] as? NSNumber)?.intValue == 6, "one refused call and five plain ones")
        let store = try workspace.openStore()
        let fitness = try #require(
            try store.batches.batchFitness(provider: "openai", model: "claude-haiku-4-5"))
        #expect(
            fitness.structuredRefusal
                == "500: this server does not support structured output (response_format json_schema, tool_choice)"
        )
    }

    /// llama-cpp-python's server: `json_schema` refused with a 500, `json_object` with a schema
    /// held to the shape. A weak model behind it answers every item in the perfect model's calls,
    /// plus the one refused.
    @Test func aWeakModelBehindAServerRefusingJSONSchemaIsHeldByTheJSONObjectForm() throws {
        let perfect = try SimProcess()
        let reference = try Self.workspace(
            sim: perfect, count: 40, settings: "limits: {openai: {in_flight: 1}}", provider: "openai")
        #expect(try Self.run(reference).spend.calls == 5)
        let weak = try SimProcess(arguments: [
            "--weak-model", "--seed", "3", "--refuse-json-schema", "--structured-refusal-status", "500",
        ])
        let workspace = try Self.workspace(
            sim: weak, count: 40, settings: "limits: {openai: {in_flight: 1}}", provider: "openai")
        let outcome = try Self.run(workspace)
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.spend.failedCalls == 1, "json_schema refused once")
        #expect(outcome.spend.calls == 6, "then the perfect model's five")
        #expect(BatchedRunTests.answers(workspace) == BatchedRunTests.answers(reference))
        let store = try workspace.openStore()
        let fitness = try #require(
            try store.batches.batchFitness(provider: "openai", model: "claude-haiku-4-5"))
        #expect(fitness.prompts == 5 && fitness.itemsKept == 40, "every batched answer held")
        #expect(
            try #require(FitnessLine(fitness, now: Date())).nowCell
                == "as each job says; json_schema refused (500: this server does not support structured output "
                + "(respon…); json_object with a schema used")
    }

    @Test func aServerRefusingBothFormsGetsPlainPromptsAfterTwoRefusals() throws {
        let sim = try SimProcess(arguments: ["--no-structured-output"])
        let workspace = try Self.workspace(
            sim: sim, count: 40, settings: "limits: {openai: {in_flight: 1}}", provider: "openai")
        let outcome = try Self.run(workspace)
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.run.itemsDone == 40)
        #expect(outcome.spend.failedCalls == 2, "json_schema refused, then json_object")
        #expect(outcome.spend.calls == 7, "then five plain prompts")
        let store = try workspace.openStore()
        let fitness = try #require(
            try store.batches.batchFitness(provider: "openai", model: "claude-haiku-4-5"))
        #expect(fitness.refuses(.jsonSchema, at: Date()) && fitness.refuses(.jsonObject, at: Date()))
        #expect(
            CallPlanning.answerForm(.auto, provider: .openai, fitness: fitness, now: Date()) == nil)
    }

    /// `structured_output: on` against a server that refuses the form: one refused call, then
    /// plain prompts; the items are answered, not sent round and round to be refused again.
    @Test func onAgainstAServerThatRefusesEveryFormGoesPlainAfterTheRefusal() throws {
        let sim = try SimProcess(arguments: ["--no-structured-output"])
        let workspace = try Self.workspace(
            sim: sim, count: 40, settings: "structured_output: on\nlimits: {sim: {in_flight: 1}}")
        let outcome = try Self.run(workspace)
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.run.itemsDone == 40)
        #expect(outcome.spend.failedCalls == 1)
        #expect(outcome.spend.calls == 6, "one refused call, then five plain prompts of 8")
    }
}
