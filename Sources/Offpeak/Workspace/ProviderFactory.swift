import Foundation
import Logging

/// Builds the provider a workspace is configured for, reading keys and base URLs from the
/// environment the way the official SDKs do, so existing shell setups just work.
enum ProviderFactory {
    /// Where `offpeak-sim` listens unless told otherwise.
    static let defaultSimURL = "http://127.0.0.1:8089"

    /// - Parameters:
    ///   - config: provider, base URL override, timeouts and retries.
    ///   - environment: usually `ProcessInfo.processInfo.environment`; its keys (and every other
    ///     credential in it) are redacted from whatever the provider sends back.
    ///   - cancellation: raised to abort calls in flight (the SIGTERM grace period).
    /// - Throws: `.missingKey` when the provider needs a key that is not set.
    static func make(
        config: WorkspaceConfig, environment: [String: String], logger: Logger,
        cancellation: CancellationFlag? = nil
    ) throws(ProviderError) -> any CompletionProvider {
        func variable(_ name: String) -> String? {
            guard let value = environment[name]?.trimmingCharacters(in: .whitespacesAndNewlines),
                !value.isEmpty
            else { return nil }
            return value
        }
        func key(_ name: String) throws(ProviderError) -> String {
            guard let value = variable(name) else { throw .missingKey(variable: name) }
            return value
        }
        let configured = config.baseURL.flatMap { $0.isEmpty ? nil : $0 }
        let options = ProviderOptions(
            connectTimeout: config.connectTimeout, requestTimeout: config.requestTimeout,
            retryPolicy: RetryPolicy(maxRetries: max(0, config.maxRetries)), cancellation: cancellation,
            redactor: Redactor(environment: environment))
        switch config.provider {
        case .anthropic:
            return AnthropicProvider(
                apiKey: try key("ANTHROPIC_API_KEY"), baseURL: configured ?? variable("ANTHROPIC_BASE_URL"),
                options: options, logger: logger)
        case .openai:
            return OpenAIProvider(
                apiKey: try key("OPENAI_API_KEY"), baseURL: configured ?? variable("OPENAI_BASE_URL"),
                options: options,
                logger: logger)
        case .sim:
            return AnthropicProvider(
                apiKey: "sim", baseURL: configured ?? variable("OFFPEAK_SIM_URL") ?? defaultSimURL,
                kind: .sim,
                options: options, logger: logger)
        }
    }
}
