import Foundation
import Logging

/// Builds the provider a workspace is configured for, reading keys and base URLs from the
/// environment the way the official SDKs do, so existing shell setups just work.
enum ProviderFactory {
    /// - Parameters:
    ///   - config: provider, base URL override, timeouts and retries.
    ///   - environment: usually `ProcessInfo.processInfo.environment`; its keys (and every other
    ///     credential in it) are redacted from whatever the provider sends back.
    ///   - cancellation: raised to abort calls in flight (the SIGTERM grace period).
    /// - Throws: `.missingKey` when the provider needs a key that is not set.
    ///   - keyVariable: the variable holding the key, instead of the provider's usual ones (a
    ///     fallback's `key_env`).
    static func make(
        config: WorkspaceConfig, environment: [String: String], logger: Logger,
        cancellation: CancellationFlag? = nil, keyVariable: String? = nil
    ) throws(ProviderError) -> any CompletionProvider {
        func variable(_ name: String) -> String? {
            guard let value = environment[name]?.trimmingCharacters(in: .whitespacesAndNewlines),
                !value.isEmpty
            else { return nil }
            return value
        }
        // Where the key and the base URL come from is the provider's to say.
        let names = config.provider.capabilities.environment
        var apiKey: String?
        if let name = keyVariable {
            guard let value = variable(name) else { throw .missingKey(variable: name) }
            apiKey = value
        } else if let name = names.key {
            guard let value = names.overridingKeys.lazy.compactMap(variable).first ?? variable(name) else {
                throw .missingKey(variable: name)
            }
            apiKey = value
        }
        let configured = config.baseURL.flatMap { $0.isEmpty ? nil : $0 }
        let baseURL = configured ?? names.baseURL.lazy.compactMap(variable).first ?? names.defaultBaseURL
        var options = ProviderOptions(
            connectTimeout: config.connectTimeout, requestTimeout: config.requestTimeout,
            retryPolicy: RetryPolicy(maxRetries: max(0, config.maxRetries)), cancellation: cancellation,
            redactor: Redactor(environment: environment))
        options.openAIWire = config.openAIWire
        return config.provider.make(apiKey: apiKey, baseURL: baseURL, options: options, logger: logger)
    }

    /// A fallback of `tier` (`fallbacks:`), made as the workspace's own provider is, with what the
    /// step changes: its provider (with that provider's base URL), its base URL, its key variable;
    /// and the model it answers with (the provider's model for the tier when the step names none).
    static func make(
        _ step: FallbackRoute, tier: JobSpec.Tier, config: WorkspaceConfig, environment: [String: String],
        logger: Logger, cancellation: CancellationFlag? = nil
    ) throws(ProviderError) -> FallbackChain.Step {
        var config = config
        if let provider = step.provider, provider != config.provider {
            config.provider = provider
            config.baseURL = nil
        }
        if let baseURL = step.baseURL { config.baseURL = baseURL }
        let provider = try make(
            config: config, environment: environment, logger: logger, cancellation: cancellation,
            keyVariable: step.keyVariable)
        return FallbackChain.Step(provider: provider, model: step.model ?? config.model(for: tier))
    }
}
