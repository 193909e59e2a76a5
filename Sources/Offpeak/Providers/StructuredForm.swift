import Foundation

/// Which structured-output form a batched prompt asks for. Servers differ in what they take: most
/// OpenAI-compatible ones honour `json_schema`, while llama-cpp-python's refuses it (a 500, "Input
/// should be 'text' or 'json_object'") yet builds a grammar from `{type: json_object, schema}`. So a
/// model whose server refused the first form is asked in the second (`CallPlanning.answerForm`).
enum StructuredForm: String, Sendable, Codable, Equatable {
    /// OpenAI `response_format: {type: json_schema, json_schema: {strict: true, schema}}`, or
    /// Anthropic's forced tool: the form asked first, and the only one on Anthropic.
    case jsonSchema = "json_schema"
    /// OpenAI-compatible `response_format: {type: json_object, schema}`: asked of a server that
    /// refused `json_schema`.
    case jsonObject = "json_object"
}
