import Foundation
import Yams

/// Reads `offpeak.yaml` into a `WorkspaceConfig`.
///
/// The file is optional and every field in it is too: what is given is merged over the defaults
/// (a `models` entry for one tier keeps the other tiers' defaults). Mistakes are reported like a job
/// spec's (`offpeak.yaml:4:3: models.anthropic.fats: unknown field; did you mean 'fast'?`) but exit
/// with `ExitStatus.configuration`, since nothing in the workspace can run until they are fixed.
enum WorkspaceConfigParser {
    /// The config file's name inside the workspace.
    static let fileName = "offpeak.yaml"
    static let fields = [
        "provider", "base_url", "models", "prices", "network", "cache", "http", "limits", "lane",
        "structured_output", "metrics", "budget", "store", "host", "lease", "retention", "fallbacks",
        "retry_primary_after", "openai_api", "batch_api",
    ]

    /// Reads `offpeak.yaml` in the workspace; no file gives the defaults.
    /// - Throws: `.ioError` if it exists but cannot be read, `.configuration` for its contents.
    static func load(workspace: URL) throws(OffpeakError) -> WorkspaceConfig {
        let url = workspace.appendingPathComponent(fileName)
        guard FileManager.default.fileExists(atPath: url.path) else { return WorkspaceConfig() }
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw OffpeakError(.ioError, "cannot read the workspace configuration", location: fileName)
        }
        let text = try UTF8Text.decode(data, file: fileName, status: .configuration)
        return try parse(yaml: text, path: fileName)
    }

    /// Parses the text of an `offpeak.yaml`; `path` prefixes every message.
    static func parse(yaml: String, path: String) throws(OffpeakError) -> WorkspaceConfig {
        let reader = YAMLNodeReader(path: path, status: .configuration)
        var config = WorkspaceConfig()
        guard let document = try reader.compose(yaml) else { return config }
        let root = try reader.mapping(document, at: "", allowed: fields)
        config.provider = try root.choice("provider", as: ProviderKind.self) ?? config.provider
        config.baseURL = try root.httpURL("base_url")
        config.models = try models(root)
        config.pricesPath = try root.nonEmptyString("prices")
        config.pricesLocation = root.value("prices").map(reader.location(of:))
        if let network = try root.mapping("network", allowed: ["metered", "unmetered"]) {
            config.meteredInterfaces = try network.strings("metered")?.map(\.0) ?? []
            config.unmeteredInterfaces = try network.strings("unmetered")?.map(\.0) ?? []
            if let both = config.meteredInterfaces.first(where: config.unmeteredInterfaces.contains) {
                let problem = "'\(both)' is listed as both metered and unmetered"
                throw reader.error("network.unmetered", problem, at: network.value("unmetered"))
            }
        }
        if let cache = try root.mapping("cache", allowed: ["max_bytes"]) {
            config.cacheMaxBytes =
                try cache.byteSize("max_bytes", atMost: ValueLimits.cacheBytes) ?? config.cacheMaxBytes
        }
        if let http = try root.mapping("http", allowed: ["connect_timeout", "timeout", "max_retries"]) {
            let most = ValueLimits.httpTimeout
            config.connectTimeout =
                try http.duration("connect_timeout", atMost: most) ?? config.connectTimeout
            config.requestTimeout = try http.duration("timeout", atMost: most) ?? config.requestTimeout
            config.maxRetries = try http.wholeNumber("max_retries", in: 0...100) ?? config.maxRetries
        }
        config.limits = try limits(root)
        config.lane = try root.choice("lane", as: JobSpec.Lane.self) ?? config.lane
        config.structuredOutput =
            try root.choice("structured_output", as: StructuredOutput.self) ?? config.structuredOutput
        config.metricsTextfile = try metricsTextfile(root)
        config.budget = try budget(root)
        config.store = try store(root)
        config.host = try host(root)
        config.leaseTTL = try root.duration("lease", atMost: ValueLimits.lease) ?? config.leaseTTL
        (config.keepRuns, config.keepLedgerRows) = try retention(root)
        config.fallbacks = try fallbacks(root)
        config.openAIWire = try root.choice("openai_api", as: OpenAIWire.self) ?? config.openAIWire
        config.batchAPI = try root.bool("batch_api")
        config.retryPrimaryAfter =
            try root.duration("retry_primary_after", atMost: ValueLimits.lease) ?? config.retryPrimaryAfter
        return config
    }

    /// `retention: {runs: 90d, ledger: 180d}` (a day at least; `ledger: off` keeps every ledger
    /// row), or `retention: off`: how long a finished run's requests and results are kept
    /// (`RunStore+Retention`), and its calls' ledger rows before they are rolled up by day
    /// (`LedgerRollUp`), at least as long; nil keeps them for good.
    private static func retention(_ root: YAMLMapping) throws(OffpeakError) -> (
        runs: TimeInterval?, ledger: TimeInterval?
    ) {
        let defaults = (runs: WorkspaceConfig.defaultKeepRuns, ledger: WorkspaceConfig.defaultKeepLedgerRows)
        guard let node = root.value("retention") else { return defaults }
        if node.scalar != nil {
            let text = try root.reader.string(node, at: "retention")
            guard text == "off" else {
                throw root.reader.error(
                    "retention",
                    "expected 'off' or a mapping with runs and ledger (for example {runs: 90d, ledger: 180d}), "
                        + "got '\(text)'",
                    at: node)
            }
            return (nil, nil)
        }
        guard let retention = try root.mapping("retention", allowed: ["runs", "ledger"]) else {
            return defaults
        }
        let runs = try retention.duration("runs", atMost: ValueLimits.longDuration) ?? defaults.runs
        guard runs >= 86_400 else {
            throw root.reader.error(
                retention.path("runs"), "expected a day or more (1d to 3650d), got less",
                at: retention.value("runs"))
        }
        if retention.value("ledger")?.scalar?.string == "off" { return (runs, nil) }
        let ledger =
            try retention.duration("ledger", atMost: ValueLimits.longDuration) ?? max(runs, defaults.ledger)
        guard ledger >= runs else {
            throw root.reader.error(
                retention.path("ledger"),
                "expected 'off' or at least retention.runs (\(Int(runs / 86_400))d): a run's calls are rolled up "
                    + "only once its requests are pruned, got \(Int(ledger / 86_400))d",
                at: retention.value("ledger"))
        }
        return (runs, ledger)
    }

    /// `store: sqlite` or `store: postgresql://USER@HOST:PORT/DATABASE`, located when wrong.
    private static func store(_ root: YAMLMapping) throws(OffpeakError) -> StoreLocation {
        guard let text = try root.string("store") else { return .sqlite }
        do {
            return try StoreLocation.parse(text, defaultUser: StoreLocation.osUser)
        } catch {
            throw root.reader.error("store", error.description, at: root.value("store"))
        }
    }

    /// `host: NAME`, the name this host goes by in the store (`HostName`), located when wrong.
    private static func host(_ root: YAMLMapping) throws(OffpeakError) -> String? {
        guard let text = try root.string("host") else { return nil }
        if let problem = HostName.problem(text) {
            throw root.reader.error("host", problem, at: root.value("host"))
        }
        return text
    }

    /// `metrics: {textfile: PATH}`: a file node_exporter's textfile collector reads, which are only
    /// those named `*.prom` (a path without it would be written and never collected).
    private static func metricsTextfile(_ root: YAMLMapping) throws(OffpeakError) -> String? {
        guard let metrics = try root.mapping("metrics", allowed: ["textfile"]),
            let path = try metrics.nonEmptyString("textfile")
        else { return nil }
        let name = path.split(separator: "/").last.map(String.init) ?? ""
        guard name.hasSuffix(".prom"), name.count > ".prom".count, !path.hasSuffix("/"), !path.contains("\0")
        else {
            throw root.reader.error(
                metrics.path("textfile"),
                "expected a file path ending in .prom (node_exporter's textfile collector reads only "
                    + "*.prom files), got '\(path)'", at: metrics.value("textfile"))
        }
        return path
    }

    /// Calls in flight, requests and tokens per minute, per provider; each a whole number from 1.
    private static func limits(_ root: YAMLMapping) throws(OffpeakError) -> [ProviderKind: ProviderLimits] {
        let providers = ProviderKind.allCases.map(\.rawValue)
        guard let byProvider = try root.mapping("limits", allowed: providers) else { return [:] }
        var limits: [ProviderKind: ProviderLimits] = [:]
        for provider in ProviderKind.allCases {
            let fields = ["in_flight", "requests_per_minute", "tokens_per_minute"]
            guard let mapping = try byProvider.mapping(provider.rawValue, allowed: fields) else { continue }
            limits[provider] = ProviderLimits(
                inFlight: try mapping.wholeNumber("in_flight", in: 1...ValueLimits.inFlight),
                requestsPerMinute: try mapping.wholeNumber(
                    "requests_per_minute", in: 1...ValueLimits.requestsPerMinute),
                tokensPerMinute: try mapping.wholeNumber(
                    "tokens_per_minute", in: 1...ValueLimits.tokensPerMinute))
        }
        return limits
    }

    /// Tier -> model per provider, where offpeak.yaml sets one; the rest are the provider's own
    /// (`ProviderCapabilities.models`).
    private static func models(
        _ root: YAMLMapping
    ) throws(OffpeakError) -> [ProviderKind: [JobSpec.Tier: String]] {
        var models: [ProviderKind: [JobSpec.Tier: String]] = [:]
        let providers = ProviderKind.allCases.map(\.rawValue)
        guard let byProvider = try root.mapping("models", allowed: providers) else { return models }
        for provider in ProviderKind.allCases {
            let tiers = JobSpec.Tier.allCases.map(\.rawValue)
            guard let byTier = try byProvider.mapping(provider.rawValue, allowed: tiers) else { continue }
            for tier in JobSpec.Tier.allCases {
                guard let model = try byTier.nonEmptyString(tier.rawValue) else { continue }
                models[provider, default: [:]][tier] = model
            }
        }
        return models
    }

    /// `fallbacks:` a chain for every tier (a list), or one per tier (`fallbacks: {balanced: [...]}`).
    private static func fallbacks(_ root: YAMLMapping) throws(OffpeakError) -> [JobSpec.Tier: [FallbackRoute]]
    {
        guard let node = root.value("fallbacks") else { return [:] }
        let reader = root.reader
        if case .sequence = node {
            let chain = try FallbackRoute.chain(node, at: "fallbacks", reader: reader)
            return Dictionary(uniqueKeysWithValues: JobSpec.Tier.allCases.map { ($0, chain) })
        }
        let tiers = JobSpec.Tier.allCases.map(\.rawValue)
        let byTier = try reader.mapping(node, at: "fallbacks", allowed: tiers)
        var chains: [JobSpec.Tier: [FallbackRoute]] = [:]
        for tier in JobSpec.Tier.allCases {
            guard let list = byTier.value(tier.rawValue) else { continue }
            chains[tier] = try FallbackRoute.chain(list, at: byTier.path(tier.rawValue), reader: reader)
        }
        return chains
    }
}
