import Foundation
import GRDB
import Testing

@testable import Offpeak

/// The second structured-output form: an OpenAI-compatible server that refused `json_schema`
/// (llama-cpp-python's) is asked for `json_object` with the schema, then plain once it refused both.
struct StructuredFormTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func theJSONObjectFormCarriesTheSameSchemaBesideItsType() throws {
        var request = StructuredAnswerTests.batched(keys: ["iab12", "icd34"])
        request.answerForm = .jsonObject
        let body = try StructuredAnswerTests.object(try OpenAIProvider.requestBody(for: request))
        let format = try #require(body["response_format"] as? [String: Any])
        #expect(Set(format.keys) == ["type", "schema"])
        #expect(format["type"] as? String == "json_object")
        let schema = try #require(format["schema"] as? [String: Any])
        #expect(schema["required"] as? [String] == ["iab12", "icd34"])
        #expect(schema["additionalProperties"] as? Bool == false)
        let properties = try #require(schema["properties"] as? [String: [String: String]])
        #expect(properties == ["iab12": ["type": "string"], "icd34": ["type": "string"]])
        #expect(CanonicalJSON.text(request).contains(#""answerForm":"json_object""#), "part of the cache key")
        let first = StructuredAnswerTests.batched(keys: ["iab12", "icd34"])
        #expect(first.structuredForm == .jsonSchema && request.structuredForm == .jsonObject)
        #expect(
            !CanonicalJSON.text(first).contains("answerForm"), "the first form's requests keep their keys")
    }

    @Test func eachRefusalMovesAnOpenAIModelOneFormDownAndAnthropicStraightToPlain() {
        var fitness = BatchFitness(provider: "openai", model: "m", at: start)
        func form(_ provider: ProviderKind, _ setting: StructuredOutput = .auto) -> StructuredForm? {
            CallPlanning.answerForm(setting, provider: provider, fitness: fitness, now: start)
        }
        #expect(form(.openai) == .jsonSchema)
        fitness.refuseStructured("500: Input should be 'text' or 'json_object'", form: .jsonSchema, at: start)
        #expect(form(.openai) == .jsonObject && form(.openai, .on) == .jsonObject)
        fitness.plainLossAt = start
        #expect(form(.anthropic) == nil, "Anthropic's forced tool is its only form")
        fitness.refuseStructured("400: unknown field schema", form: .jsonObject, at: start)
        #expect(form(.openai) == nil && form(.openai, .off) == nil)
        #expect(fitness.structuredRefusal == "500: Input should be 'text' or 'json_object'")
        let later = start.addingTimeInterval(BatchFitness.memory)
        #expect(
            CallPlanning.answerForm(.auto, provider: .openai, fitness: fitness, now: later) == .jsonSchema)
    }

    @Test func aRecordStoredBeforeTheSecondFormDecodesWithOnlyJSONSchemaRefused() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Store.open(Workspace(root: folder))
        let at = start.timeIntervalSinceReferenceDate
        let old = """
            {"emptyInARow":0,"itemsAsked":8,"itemsKept":8,"model":"m","pauses":0,"prompts":1,\
            "provider":"openai","rejections":{},"structuredRefusal":"500: Input should be 'text' or 'json_object'",\
            "structuredRefusedAt":\(at),"updatedAt":\(at)}
            """
        try store.sqlite.write { db in
            try db.execute(
                sql: "INSERT INTO batch_fitness (provider, model, fitness, updated_at) VALUES (?, ?, ?, ?)",
                arguments: ["openai", "m", old, start])
        }
        let fitness = try #require(try store.batches.batchFitness(provider: "openai", model: "m"))
        #expect(fitness.refusesStructured(at: start) && !fitness.refuses(.jsonObject, at: start))
        #expect(
            CallPlanning.answerForm(.auto, provider: .openai, fitness: fitness, now: start) == .jsonObject)
    }

    @Test func statusSaysWhichFormIsUsedNow() throws {
        var fitness = BatchFitness(provider: "openai", model: "m", at: start)
        fitness.refuseStructured("500: Input should be 'text' or 'json_object'", form: .jsonSchema, at: start)
        #expect(
            try #require(FitnessLine(fitness, now: start)).nowCell
                == "as each job says; json_schema refused (500: Input should be 'text' or 'json_object'); "
                + "json_object with a schema used")
        fitness.refuseStructured("400: unknown field schema", form: .jsonObject, at: start)
        #expect(
            try #require(FitnessLine(fitness, now: start)).nowCell
                == "as each job says; structured output refused (400: unknown field schema)")
        var llama = BatchFitness(provider: "openai", model: "m", at: start)
        llama.refuseStructured(
            "500: 1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
                + "'msg': \"Input should be 'text' or 'json_object'\"}", form: .jsonSchema, at: start)
        #expect(
            try #require(FitnessLine(llama, now: start)).nowCell
                == "as each job says; json_schema refused (500: 1 validation error: {'type': 'literal_error', 'loc': (…); "
                + "json_object with a schema used", "the server's words cut short, what is used kept")
        var anthropic = BatchFitness(provider: "anthropic", model: "m", at: start)
        anthropic.refuseStructured("400: tool_choice is not supported", form: .jsonSchema, at: start)
        #expect(
            try #require(FitnessLine(anthropic, now: start)).nowCell
                == "as each job says; structured output refused (400: tool_choice is not supported)")
    }
}
