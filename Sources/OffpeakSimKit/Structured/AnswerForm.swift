import Foundation

/// How a request asked its answer to be shaped: free text, or held by the server to a JSON form
/// (OpenAI's `response_format`, Anthropic's forced tool call), as offpeak asks for batched answers.
public enum AnswerForm: Sendable, Equatable {
    case text
    /// `response_format: {type: json_object}`: some JSON object, any keys.
    case jsonObject
    /// `response_format: {type: json_schema}` with the schema's required properties.
    case schema(required: [String])
    /// `response_format: {type: json_object, schema}` with the schema's required properties:
    /// llama-cpp-python's form, which builds a grammar from the schema.
    case objectSchema(required: [String])
    /// `tool_choice: {type: tool, name}`: the answer is that tool's input.
    case tool(name: String)

    /// Whether the server holds the answer to the object the prompt asks for: a batched answer is
    /// then never written as prose, with other keys or half finished, whatever the model.
    var holdsShape: Bool {
        switch self {
        case .schema, .objectSchema, .tool: return true
        case .text, .jsonObject: return false
        }
    }

    /// Anthropic's tool-use system prompt for `tool_choice` `any` or `tool` on Claude 4 models, in
    /// input tokens, billed on every call that carries tools.
    static let toolSystemPromptTokens = 313

    /// An OpenAI `response_format`, read as the API does.
    /// - Throws: `SimAPIError` for a type the API does not know or a schema without `schema`.
    static func openAI(_ format: SimJSON?) throws -> AnswerForm {
        guard let format else { return .text }
        switch format["type"]?.string {
        case "text": return .text
        case "json_object":
            guard let schema = format["schema"] else { return .jsonObject }
            return .objectSchema(required: required(in: schema))
        case "json_schema":
            guard let schema = format["json_schema"]?["schema"] else {
                throw SimAPIError(.invalidRequest, "response_format.json_schema.schema: field required")
            }
            return .schema(required: required(in: schema))
        case let other:
            throw SimAPIError(
                .invalidRequest,
                "response_format.type: invalid value '\(other ?? "")'; supported values are 'json_object', "
                    + "'json_schema' and 'text'")
        }
    }

    private static func required(in schema: SimJSON) -> [String] {
        guard case .array(let required)? = schema["required"] else { return [] }
        return required.compactMap(\.string)
    }

    /// Whether this is the `json_schema` form, the one llama-cpp-python's server refuses.
    var isJSONSchema: Bool {
        if case .schema = self { return true }
        return false
    }

    /// Anthropic's `tools` and `tool_choice`: a forced tool is a shaped answer.
    /// - Throws: `SimAPIError` when `tool_choice` names a tool that is not in `tools`.
    static func anthropic(tools: [SimJSON]?, choice: SimJSON?) throws -> AnswerForm {
        guard let choice, choice["type"]?.string == "tool", let name = choice["name"]?.string else {
            return .text
        }
        guard (tools ?? []).contains(where: { $0["name"]?.string == name }) else {
            throw SimAPIError(.invalidRequest, "tool_choice.name: no tool named '\(name)' in tools")
        }
        return .tool(name: name)
    }
}
