import Foundation

/// What a provider's API can do, declared once per provider in its own file
/// (`AnthropicProvider.capabilities`, `OpenAIProvider.capabilities`) and registered with its kind
/// (`ProviderKind.capabilities`, `ProviderRegistry`). The rest of offpeak asks these, never the
/// kind: adding a provider is its own files and one registration.
struct ProviderCapabilities: Sendable {
    /// How batched prompts ask for a structured answer (`StructuredForm`).
    struct Structured: Sendable, Equatable {
        /// How the server is asked for the shape.
        enum Wire: Sendable, Equatable {
            /// A `response_format` the user knows by its form's name (`json_schema`, `json_object`).
            case responseFormat
            /// A tool the model is made to call, its input schema the shape (Anthropic).
            case forcedTool
            /// `generationConfig.responseSchema` with `responseMimeType: application/json` (Gemini).
            case responseSchema
        }

        /// The forms, in the order tried: one the server refused gives way to the next.
        var forms: [StructuredForm]
        /// Whether `structured_output: auto` asks for it from the first batched prompt (servers
        /// whose plain batched answers are often damaged: small local models), or only once plain
        /// batched answers lost items.
        var fromTheStart: Bool
        var wire: Wire

        /// How a log line names `form` to the user.
        func name(_ form: StructuredForm) -> String {
            switch wire {
            case .forcedTool: "(a forced tool)"
            case .responseSchema: "responseSchema"
            case .responseFormat: form.rawValue
            }
        }
    }

    /// How the provider caches a prompt's shared prefix.
    enum PromptCache: Sendable, Equatable {
        /// Only a prefix marked `cache_control`, at least the model's minimum long
        /// (`PromptCacheMinimum.tokens(for:)`); the first call writes it at a premium.
        case marked
        /// Any prefix from `minimumTokens` on, with no mark and no charge to write it.
        case automatic(minimumTokens: Int)
    }

    /// The model each tier maps to unless `offpeak.yaml` says otherwise.
    struct TierModels: Sendable, Equatable {
        var fast: String
        var balanced: String
        var powerful: String
    }

    /// Where the key and the base URL come from, as the provider's own SDKs read them.
    struct Environment: Sendable, Equatable {
        /// The variable holding the API key; nil: no key (offpeak-sim).
        var key: String?
        /// Variables that hold the key too and win over `key` when set, as the provider's SDKs
        /// read them (Gemini's `GOOGLE_API_KEY`).
        var overridingKeys: [String] = []
        /// The variables that may hold the base URL, the first set wins.
        var baseURL: [String]
        /// The base URL when none is set.
        var defaultBaseURL: String
        /// The command that starts a server of this kind on this machine, when the provider is
        /// one (offpeak-sim): what `offpeak init` says to start first, where others say to set a key.
        var serverCommand: String? = nil
    }

    var structured: Structured
    var promptCache: PromptCache
    /// The hosts whose servers have the provider's batch API, for the batch lane to open there
    /// (`BatchLane`); nil: any base URL the provider is given (a proxy in front of Anthropic passes
    /// Message Batches on). OpenAI's Batch API is OpenAI's own, not every server's that speaks its
    /// chat completions. `batch_api` in offpeak.yaml says otherwise for a workspace.
    var batchHosts: [String]? = nil
    /// Whether a server of this kind on this machine has the batch API too (offpeak-sim does);
    /// the local servers that imitate a real provider (llama.cpp, Ollama) have none.
    var batchesOnThisMachine: Bool
    /// Calls in flight toward a server on this machine unless `limits` says otherwise: a
    /// llama.cpp or Ollama server often answers one request at a time.
    var loopbackInFlight: Int
    /// The provider's flex processing (`CallLane.flex`); nil: it has none.
    var flex: FlexProcessing? = nil
    /// How a call searches the web (`search:`), and with which models; nil: it cannot.
    var webSearch: WebSearchSupport? = nil
    var models: TierModels
    var environment: Environment
    /// The provider's own limit on an account's calls in flight, which no configured `in_flight`
    /// goes past; nil: it states none.
    var mostInFlight: Int? = nil

    /// Whether the server at `baseURL` has the provider's batch API: as `declared` (offpeak.yaml's
    /// `batch_api`) says, else as the provider declares for its host.
    func hasBatchAPI(at baseURL: String, declared: Bool?) -> Bool {
        if let declared { return declared }
        guard let batchHosts else { return true }
        return URL(string: baseURL)?.host.map { batchHosts.contains($0.lowercased()) } ?? false
    }
}
