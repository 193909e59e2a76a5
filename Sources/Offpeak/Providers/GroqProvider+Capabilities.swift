import Foundation
import Logging

/// What Groq's API can do (console.groq.com/docs, read 2026-11-29).
extension Groq {
    static let capabilities = ProviderCapabilities(
        // JSON mode on every model (a schema only on a few); small models damage plain batched
        // answers, so `auto` asks for the mode from the start.
        structured: .init(forms: [.jsonObject], fromTheStart: true, wire: .responseFormat),
        // Groq caches repeated prefixes by itself on the models that cache (none of the Llama ones):
        // a read bills at its cached price where the table has one, at the input price where not.
        promptCache: .automatic(minimumTokens: 128),
        batchesOnThisMachine: false, loopbackInFlight: ProviderLimits.loopbackInFlight,
        models: .init(
            fast: "llama-3.1-8b-instant", balanced: "llama-3.3-70b-versatile",
            powerful: "llama-3.3-70b-versatile"),
        environment: .init(key: "GROQ_API_KEY", baseURL: ["GROQ_BASE_URL"], defaultBaseURL: defaultBaseURL))

    static let registration: ProviderRegistration = .init(
        name: "groq", capabilities: capabilities, prices: prices
    ) {
        key, baseURL, options, logger in
        GroqProvider(apiKey: key ?? "", baseURL: baseURL, options: options, logger: logger)
    }
}
