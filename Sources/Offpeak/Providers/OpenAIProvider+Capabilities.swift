import Foundation
import Logging

/// What OpenAI's chat completions can do, and the OpenAI-compatible servers (llama.cpp, vLLM,
/// Ollama, LiteLLM) that speak its shape.
extension OpenAIProvider {
    static let capabilities = ProviderCapabilities(
        // `json_schema` first; a compatible server that refuses it often takes `json_object` with
        // the schema. Small local models damage plain batched answers: `auto` asks from the start.
        structured: .init(forms: [.jsonSchema, .jsonObject], fromTheStart: true, wire: .responseFormat),
        promptCache: .automatic(minimumTokens: 1024),
        // The Batch API is OpenAI's: a compatible server declares one with `batch_api: true`.
        batchHosts: [ownHost],
        batchesOnThisMachine: false, loopbackInFlight: ProviderLimits.loopbackInFlight,
        // Flex processing, at the batch prices, for the models OpenAI's pricing page lists it for;
        // its guide raises the client's timeout to 15 minutes.
        flex: FlexProcessing(models: ["o3", "o4-mini", "gpt-5"], timeout: 900),
        // Chat completions search only with a search model (`-search` in its name); any other
        // answers `web_search_options` with a 400. An OpenAI-compatible server elsewhere (a base
        // URL that is not OpenAI's) is held to the same rule: llama.cpp, Ollama and vLLM ignore
        // `web_search_options` and would answer from memory while the ledger bills a search, so a
        // model named with `-search` is sent (a LiteLLM proxy's alias for a model that searches),
        // any other refused before anything is sent.
        webSearch: .searchModels(
            api: "OpenAI's chat completions",
            examples: ["gpt-4o-search-preview", "gpt-4o-mini-search-preview"]),
        models: .init(fast: "gpt-4o-mini", balanced: "gpt-4.1", powerful: "o3"),
        environment: .init(
            key: "OPENAI_API_KEY", baseURL: ["OPENAI_BASE_URL"], defaultBaseURL: defaultBaseURL))

    /// OpenAI's own API host, where its Batch and Responses APIs are.
    static let ownHost = "api.openai.com"

    static let registration: ProviderRegistration = .init(
        name: "openai", capabilities: capabilities, prices: prices
    ) {
        key, baseURL, options, logger in
        if options.openAIWire.speaksResponses(at: baseURL) {
            return OpenAIResponsesProvider(
                apiKey: key ?? "", baseURL: baseURL, options: options, logger: logger)
        }
        return OpenAIProvider(apiKey: key ?? "", baseURL: baseURL, options: options, logger: logger)
    }
}

/// Which of OpenAI's APIs the `openai` provider speaks (`openai_api` in offpeak.yaml): the Responses
/// API (`OpenAIResponsesProvider`), where OpenAI documents its newer models first, or chat
/// completions (`OpenAIProvider`), which every OpenAI-compatible server speaks.
public enum OpenAIWire: String, Sendable, CaseIterable, Codable {
    /// The Responses API at OpenAI itself (a base URL on `api.openai.com`), chat completions elsewhere.
    case auto
    case responses
    case chatCompletions = "chat_completions"

    func speaksResponses(at baseURL: String) -> Bool {
        switch self {
        case .responses: return true
        case .chatCompletions: return false
        case .auto: return URL(string: baseURL)?.host?.lowercased() == OpenAIProvider.ownHost
        }
    }
}
