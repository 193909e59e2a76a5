import Foundation
import Logging

/// The one place each provider kind is registered: what it can do (`ProviderCapabilities`) and
/// how one is made. Adding a provider adds its case to `ProviderKind`, its own files, and its
/// lines here.
extension ProviderKind {
    /// The provider a workspace calls when offpeak.yaml names none.
    public static let standard: ProviderKind = .anthropic

    /// `anthropic, openai, sim, gemini`: every registered provider, as help texts list them.
    public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }

    var capabilities: ProviderCapabilities {
        switch self {
        case .anthropic: AnthropicProvider.capabilities
        case .openai: OpenAIProvider.capabilities
        case .sim: AnthropicProvider.simCapabilities
        case .gemini: GeminiProvider.capabilities
        }
    }

    /// A provider of this kind, calling `baseURL` with `apiKey` (nil for one that needs none).
    func make(apiKey: String?, baseURL: String, options: ProviderOptions, logger: Logger)
        -> any CompletionProvider
    {
        switch self {
        case .anthropic:
            AnthropicProvider(apiKey: apiKey ?? "", baseURL: baseURL, options: options, logger: logger)
        case .openai:
            OpenAIProvider(apiKey: apiKey ?? "", baseURL: baseURL, options: options, logger: logger)
        case .sim:
            AnthropicProvider(apiKey: "sim", baseURL: baseURL, kind: .sim, options: options, logger: logger)
        case .gemini:
            GeminiProvider(apiKey: apiKey ?? "", baseURL: baseURL, options: options, logger: logger)
        }
    }
}

extension CompletionProvider {
    /// What this provider's API can do.
    var capabilities: ProviderCapabilities { kind.capabilities }
}
