import Foundation
import Logging

/// What the Anthropic Messages API can do, and offpeak-sim, which speaks its shape.
extension AnthropicProvider {
    static let capabilities = ProviderCapabilities(
        // A forced tool holds the answer's shape; plain batched answers from Claude are rarely
        // damaged, so `auto` turns it on only once a plain one lost items.
        structured: .init(forms: [.jsonSchema], fromTheStart: false, wire: .forcedTool),
        promptCache: .marked,
        batchesOnThisMachine: false, loopbackInFlight: ProviderLimits.loopbackInFlight,
        // The `web_search` server tool, on any model, at most `max_uses` searches a call.
        webSearch: .cappedTool,
        models: .init(fast: "claude-haiku-4-5", balanced: "claude-sonnet-4-5", powerful: "claude-opus-4-1"),
        environment: .init(
            key: "ANTHROPIC_API_KEY", baseURL: ["ANTHROPIC_BASE_URL"], defaultBaseURL: defaultBaseURL))

    /// offpeak-sim: Anthropic's shape, no key, Message Batches on loopback, and calls answered
    /// concurrently (as a remote API does).
    static let simCapabilities: ProviderCapabilities = {
        var sim = capabilities
        sim.batchesOnThisMachine = true
        sim.loopbackInFlight = ProviderLimits.remoteInFlight
        sim.environment = .init(
            key: nil, baseURL: ["OFFPEAK_SIM_URL"], defaultBaseURL: "http://127.0.0.1:8089",
            serverCommand: "offpeak-sim &")
        return sim
    }()

    static let registration: ProviderRegistration = .init(
        name: "anthropic", capabilities: capabilities, prices: prices
    ) {
        key, baseURL, options, logger in
        AnthropicProvider(apiKey: key ?? "", baseURL: baseURL, options: options, logger: logger)
    }

    static let simRegistration: ProviderRegistration = .init(
        name: "sim", capabilities: simCapabilities, prices: prices
    ) {
        _, baseURL, options, logger in
        AnthropicProvider(apiKey: "sim", baseURL: baseURL, kind: .sim, options: options, logger: logger)
    }
}
