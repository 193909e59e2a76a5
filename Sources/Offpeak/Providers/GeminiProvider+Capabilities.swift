import Foundation
import Logging

/// What Google's Gemini API can do.
extension GeminiProvider {
    static let capabilities = ProviderCapabilities(
        // `responseSchema` holds a batched answer's shape; Gemini's plain batched answers are
        // rarely damaged, so `auto` asks for it only once a plain one lost items.
        structured: .init(forms: [.jsonSchema, .jsonObject], fromTheStart: false, wire: .responseSchema),
        // Gemini 2.5 models cache a repeated prefix by themselves (implicit caching), from 1,024
        // tokens, and bill no write.
        promptCache: .automatic(minimumTokens: 1024),
        batchesOnThisMachine: false, loopbackInFlight: ProviderLimits.loopbackInFlight,
        // Grounding with Google Search (`googleSearch`), on any model; it takes no cap.
        webSearch: .grounding,
        models: .init(
            fast: "gemini-2.5-flash-lite", balanced: "gemini-2.5-flash", powerful: "gemini-2.5-pro"),
        // As Google's SDKs read them: GOOGLE_API_KEY wins over GEMINI_API_KEY when both are set.
        environment: .init(
            key: "GEMINI_API_KEY", overridingKeys: ["GOOGLE_API_KEY"], baseURL: ["GEMINI_BASE_URL"],
            defaultBaseURL: defaultBaseURL))

    static let registration: ProviderRegistration = .init(
        name: "gemini", capabilities: capabilities, prices: prices
    ) {
        key, baseURL, options, logger in
        GeminiProvider(apiKey: key ?? "", baseURL: baseURL, options: options, logger: logger)
    }
}
