import Foundation
import Logging

/// What DeepSeek's API can do (api-docs.deepseek.com, read 2026-11-29).
extension DeepSeek {
    static let capabilities = ProviderCapabilities(
        // JSON output mode only (`json_object`); its plain batched answers hold, so `auto` asks for
        // the mode only once one lost items.
        structured: .init(forms: [.jsonObject], fromTheStart: false, wire: .responseFormat),
        // Context caching on disk, by itself, for any repeated prefix in units of 64 tokens; a
        // cache hit bills at its own price, and writing costs nothing.
        promptCache: .automatic(minimumTokens: 64),
        batchesOnThisMachine: false, loopbackInFlight: ProviderLimits.loopbackInFlight,
        models: .init(fast: "deepseek-flash", balanced: "deepseek-v4-pro", powerful: "deepseek-v4-pro"),
        environment: .init(
            key: "DEEPSEEK_API_KEY", baseURL: ["DEEPSEEK_BASE_URL"], defaultBaseURL: defaultBaseURL),
        // The account's limit on requests in flight: 500 for deepseek-v4-pro (2,500 for Flash);
        // past it DeepSeek answers 429, which the limiter already backs off from.
        mostInFlight: 500)

    static let registration: ProviderRegistration = .init(
        name: "deepseek", capabilities: capabilities, prices: prices
    ) {
        key, baseURL, options, logger in
        DeepSeekProvider(apiKey: key ?? "", baseURL: baseURL, options: options, logger: logger)
    }
}
