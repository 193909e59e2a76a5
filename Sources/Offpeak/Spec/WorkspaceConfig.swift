import Foundation

/// `offpeak.yaml`: which provider, which model per tier, prices, interfaces, cache bounds, HTTP
/// timeouts, each provider's limits and the workspace's daily and monthly budget.
///
/// Every field has a default, so a workspace with no `offpeak.yaml` works (with the sim, or with a key).
struct WorkspaceConfig: Sendable, Equatable {
    var provider: ProviderKind = .standard
    /// Overrides the provider's base URL (and the `*_BASE_URL` variable).
    var baseURL: String?
    /// Tier -> model, per provider.
    var models: [ProviderKind: [JobSpec.Tier: String]] = [:]
    /// A LiteLLM-format price file, relative to the workspace, merged over the bundled prices.
    var pricesPath: String?
    /// Where `prices` is written (`offpeak.yaml:4:9`), so a problem in the price file points there too.
    var pricesLocation: String?
    /// Interfaces the user says are metered, or unmetered, overriding the guess from sysfs.
    var meteredInterfaces: [String] = []
    var unmeteredInterfaces: [String] = []
    /// Upper bound of the cache's compressed payload bytes.
    var cacheMaxBytes: Int = 256 * 1024 * 1024
    /// Seconds to wait for a connection, and for a whole call.
    var connectTimeout: TimeInterval = 10
    var requestTimeout: TimeInterval = 120
    /// How many times a retryable failure is tried again.
    var maxRetries: Int = 4
    /// Calls in flight, requests and tokens per minute, per provider; a provider not listed gets
    /// the defaults (`ProviderLimits`).
    var limits: [ProviderKind: ProviderLimits] = [:]
    /// The lane of jobs whose spec says `auto` (or nothing): `batch` sends them all through the
    /// provider's batch API, whatever their deadline; `auto` goes by each job's deadline.
    var lane: JobSpec.Lane = .auto
    /// Whether batched prompts ask for their answer in the provider's structured-output form.
    var structuredOutput: StructuredOutput = .auto
    /// `metrics.textfile`: where `tick` and `run` write node_exporter textfile-collector metrics
    /// (relative to the workspace, or absolute); `nil`: no metrics are written.
    var metricsTextfile: String?
    /// What the whole workspace may spend per local day and month (`budget:`).
    var budget = WorkspaceBudget()
    /// `store:`: the embedded SQLite file, or a PostgreSQL URL (`OFFPEAK_STORE` overrides it).
    var store: StoreLocation = .sqlite
    /// `host:`: the name this host goes by in the store (`OFFPEAK_HOST` overrides it; `HostName`).
    var host: String?
    /// How long a run's lease outlives a process that stopped renewing it (each commit renews it)
    /// before another process or host may take the run over (`lease:`).
    var leaseTTL: TimeInterval = 300
    /// `retention.runs`: how long a finished run's requests, results and checkpoint are kept once
    /// it finished; nil (`retention: off`) keeps them for good.
    var keepRuns: TimeInterval? = WorkspaceConfig.defaultKeepRuns
    /// 90 days: a quarter's runs to look into, answer by answer.
    static let defaultKeepRuns: TimeInterval = 90 * 86_400
    /// `retention.ledger`: how long a pruned run's calls keep a ledger row each once it finished,
    /// before they are rolled up by day (`LedgerRollUp`); nil (`ledger: off`, or `retention: off`)
    /// keeps every row. At least `keepRuns`.
    var keepLedgerRows: TimeInterval? = WorkspaceConfig.defaultKeepLedgerRows
    /// 180 days: half a year of calls one by one; every total is kept after.
    static let defaultKeepLedgerRows: TimeInterval = 180 * 86_400

    /// `fallbacks:`: where each tier's calls go, in order, while the provider cannot answer; a job
    /// may give its own chain (`JobSpec.fallbacks`).
    var fallbacks: [JobSpec.Tier: [FallbackRoute]] = [:]
    /// `retry_primary_after`: how long a provider that failed without saying when to come back
    /// (no `retry-after`) is left to its fallbacks before it is tried again.
    var retryPrimaryAfter: TimeInterval = 60
    /// `openai_api`: which of OpenAI's APIs the `openai` provider speaks (`OpenAIWire`).
    var openAIWire: OpenAIWire = .auto
    /// `batch_api`: whether the server at the base URL has the provider's batch API, whatever the
    /// provider declares for its host (`ProviderCapabilities.batchHosts`): `true` for an
    /// OpenAI-compatible proxy that passes OpenAI's Batch API on, `false` for a proxy in front of
    /// Anthropic that does not; nil: as declared.
    var batchAPI: Bool?

    init() {}

    /// The limits configured for `provider` (the configured one by default); unset fields take
    /// their defaults when the limiter is made (`CallLimiter`).
    func limits(for provider: ProviderKind? = nil) -> ProviderLimits {
        limits[provider ?? self.provider] ?? ProviderLimits()
    }

    /// The model a tier maps to for the configured provider.
    func model(for tier: JobSpec.Tier, provider: ProviderKind? = nil) -> String {
        let provider = provider ?? self.provider
        return models[provider]?[tier] ?? provider.capabilities.models[tier]
    }
}

/// `structured_output` in offpeak.yaml: whether a batched prompt asks the server to hold its answer
/// to the JSON object it must be (`StructuredAnswer`).
enum StructuredOutput: String, Sendable, Codable, CaseIterable {
    /// OpenAI-compatible servers: always (it costs nothing). Anthropic: only for a model whose
    /// plain batched answers were rejected, since a forced tool adds Anthropic's tool-use system
    /// prompt (about 300 input tokens) to every call.
    case auto
    /// Every batched prompt, on every provider, unless the server refused the form lately: then
    /// plain, as under `auto`.
    case on
    /// Never: for servers that reject the form (a rejection is also detected and remembered).
    case off
}

extension ProviderCapabilities.TierModels {
    /// The provider's model for `tier`.
    subscript(tier: JobSpec.Tier) -> String {
        switch tier {
        case .fast: fast
        case .balanced: balanced
        case .powerful: powerful
        }
    }
}
