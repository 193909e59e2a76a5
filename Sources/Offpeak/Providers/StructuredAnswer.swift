import Foundation

/// A batched prompt's answer asked for in each provider's structured-output form, so a model that
/// writes prose around its JSON, or invents keys, is held to the shape by the server itself.
///
/// The answer is still checked item by item by `AnswerSplitter`: a server may ignore the form (a
/// proxy that drops `response_format`), and a model held to the shape can still answer wrongly.
enum StructuredAnswer {
    /// The name of the OpenAI schema and of the tool Anthropic is made to call.
    static let name = "record_answers"

    /// OpenAI-compatible `response_format` (OpenAI, llama.cpp, vLLM, Ollama, LiteLLM): a strict JSON
    /// schema whose properties, all required, are exactly `keys`, each a string; in the
    /// `json_object` form, the same schema beside `type` (llama-cpp-python builds a grammar from it).
    static func responseFormat(keys: [String], form: StructuredForm = .jsonSchema) -> JSONValue {
        if form == .jsonObject {
            return .object(["type": .string("json_object"), "schema": schema(keys: keys)])
        }
        return .object([
            "type": .string("json_schema"),
            "json_schema": .object([
                "name": .string(name), "strict": .bool(true), "schema": schema(keys: keys),
            ]),
        ])
    }

    static func schema(keys: [String]) -> JSONValue {
        .object([
            "type": .string("object"),
            "properties": .object(
                Dictionary(keys.map { ($0, .object(["type": .string("string")])) }) { a, _ in a }),
            "required": .array(keys.map(JSONValue.string)),
            "additionalProperties": .bool(false),
        ])
    }

    /// Anthropic's way to force a shape: one tool, which the model must call, whose input is the
    /// answer. Its schema is the same for every batched prompt (an object of strings), not the
    /// batch's ids: tools come first in Anthropic's cached prefix, so a schema naming each batch's
    /// ids would make every call miss the system prompt's cache. The ids are checked by the splitter.
    static let anthropicTool: JSONValue = .object([
        "name": .string(name),
        "description": .string(
            "Record the answer to every item of the prompt: one member per item id, its value the "
                + "item's answer as a string."),
        "input_schema": .object([
            "type": .string("object"), "additionalProperties": .object(["type": .string("string")]),
        ]),
    ])

    /// Whether an error answering a call that asked for the form is the server refusing the form: a
    /// 400 or 422, or a 500 whose message names it (llama-cpp-python's server answers `json_schema`
    /// with a 500: "Input should be 'text' or 'json_object'"). Any other 500 is the server failing.
    static func isRefusal(status: Int, message: String) -> Bool {
        if status == 400 || status == 422 { return true }
        guard status == 500 else { return false }
        return ["response_format", "json_schema", "tool_choice"].contains {
            message.range(of: $0, options: .caseInsensitive) != nil
        }
    }

    static let anthropicToolChoice: JSONValue = .object(["type": .string("tool"), "name": .string(name)])
}
