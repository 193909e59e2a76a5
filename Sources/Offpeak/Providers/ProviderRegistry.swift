import Foundation
import Logging

/// What one provider brings to offpeak under its name: what its API can do
/// (`ProviderCapabilities`) and how one is made. Each provider declares its own beside its code
/// (`AnthropicProvider.registration`); `ProviderRegistry` lists them.
struct ProviderRegistration: Sendable {
    /// The name `offpeak.yaml`, `--provider` and the store know it by.
    var name: String
    var capabilities: ProviderCapabilities
    /// Its models' prices in LiteLLM's format (`PriceTable`, in Pricing), the JSON text of a
    /// price map: what offpeak bills its calls at unless a workspace's price file says otherwise.
    var prices: String
    /// A provider of this kind, calling the base URL with the key (nil for one that needs none).
    var make:
        @Sendable (_ apiKey: String?, _ baseURL: String, _ options: ProviderOptions, _ logger: Logger) ->
            any CompletionProvider
}

/// The providers offpeak can call: the one place they are listed. Help texts, `offpeak.yaml`'s
/// `provider:`, `models:` and `limits:`, `init`, `estimate`'s placeholder keys, the bundled
/// prices, the tick's environment and the docs' checks all read this list, so a provider is added by its own files
/// and one line here.
enum ProviderRegistry {
    /// Registered in this order, the order help texts name them in.
    static let builtIn: [ProviderRegistration] = [
        AnthropicProvider.registration,
        OpenAIProvider.registration,
        AnthropicProvider.simRegistration,
        GeminiProvider.registration,
        DeepSeek.registration,
        Groq.registration,
        Mistral.registration,
    ]

    /// The registered providers: the built-in ones, unless a scope says otherwise
    /// (`$registered.withValue(builtIn + [another]) { … }`, as a test adding a provider does,
    /// without changing what the rest of the process sees).
    @TaskLocal static var registered: [ProviderRegistration] = builtIn
}

extension ProviderKind {
    public static let anthropic = ProviderKind(AnthropicProvider.registration)
    public static let openai = ProviderKind(OpenAIProvider.registration)
    public static let sim = ProviderKind(AnthropicProvider.simRegistration)
    public static let gemini = ProviderKind(GeminiProvider.registration)
    public static let deepseek = ProviderKind(DeepSeek.registration)
    public static let groq = ProviderKind(Groq.registration)
    public static let mistral = ProviderKind(Mistral.registration)

    /// The provider a workspace calls when offpeak.yaml names none.
    public static let standard: ProviderKind = .anthropic

    /// `anthropic, openai, sim, gemini`: every registered provider, as help texts list them.
    public static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

extension CompletionProvider {
    /// What this provider's API can do.
    var capabilities: ProviderCapabilities { kind.capabilities }
}
