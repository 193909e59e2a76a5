import Foundation
import Logging

/// What Mistral's API can do (docs.mistral.ai, read 2026-11-29).
extension Mistral {
    static let capabilities = ProviderCapabilities(
        // Custom structured outputs (`json_schema`) on its current models, JSON mode (`json_object`)
        // where a schema is refused. Its plain batched answers hold, so `auto` asks for a shape only
        // once one lost items.
        structured: .init(forms: [.jsonSchema, .jsonObject], fromTheStart: false, wire: .responseFormat),
        // Mistral bills no cached prompt tokens apart (its table has no cache price): a cached
        // prefix, if its server keeps one, is priced as input.
        promptCache: .automatic(minimumTokens: 1024),
        batchesOnThisMachine: false, loopbackInFlight: ProviderLimits.loopbackInFlight,
        models: .init(
            fast: "mistral-small-latest", balanced: "mistral-medium-latest", powerful: "mistral-large-latest"),
        environment: .init(
            key: "MISTRAL_API_KEY", baseURL: ["MISTRAL_BASE_URL"], defaultBaseURL: defaultBaseURL))

    static let registration: ProviderRegistration = .init(
        name: "mistral", capabilities: capabilities, prices: prices
    ) {
        key, baseURL, options, logger in
        MistralProvider(apiKey: key ?? "", baseURL: baseURL, options: options, logger: logger)
    }
}
