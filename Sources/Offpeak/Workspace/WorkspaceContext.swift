import Foundation
import Logging

/// Everything a command needs about its workspace, loaded once: where it is, its `offpeak.yaml`, the
/// prices, and (on demand) the store and the provider.
public struct WorkspaceContext: Sendable {
    public let workspace: Workspace
    let config: WorkspaceConfig
    let prices: PriceTable
    let environment: [String: String]
    let logger: Logger

    /// Reads `offpeak.yaml` and the price table; opens nothing else.
    /// - Parameter provider: `--provider`, overriding `offpeak.yaml`.
    /// - Parameter baseURL: `--base-url`, overriding `offpeak.yaml` and the environment.
    public init(
        workspace: Workspace, environment: [String: String], logger: Logger, provider: ProviderKind? = nil,
        baseURL: String? = nil
    ) throws(OffpeakError) {
        var config = try WorkspaceConfigParser.load(workspace: workspace.root)
        if let provider, provider != config.provider {
            config.provider = provider
            config.baseURL = nil
        }
        if let baseURL { config.baseURL = baseURL }
        var prices = PriceTable.bundled
        if let path = config.pricesPath {
            let file = workspace.url(for: path)
            prices = prices.merging(
                try PriceTable.load(file: file, shownAs: path, configuredAt: config.pricesLocation))
        }
        self.workspace = workspace
        self.config = config
        self.prices = prices
        self.environment = environment
        self.logger = logger
    }

    /// `offpeak costs`.
    public func costs(by grouping: CostReport.Grouping) throws(OffpeakError) -> CostReport {
        try reports().costs(by: grouping)
    }

    /// `offpeak status`.
    public func status(limit: Int) throws(OffpeakError) -> StatusReport {
        try reports().status(limit: limit, now: Date())
    }

    /// `offpeak status RUN`.
    public func run(id: String) throws(OffpeakError) -> RunReport {
        try reports().run(id: id, now: Date())
    }

    /// `offpeak hosts`.
    public func hosts() throws(OffpeakError) -> HostReport {
        try reports().hosts(now: Date())
    }

    /// The workspace's cache, capped as `offpeak.yaml` says, on a store opened read-only when this
    /// process cannot write it (`forReading`), else the writable store.
    public func openCache(forReading: Bool = true) throws(OffpeakError) -> ResponseCache {
        let store = try forReading ? openStoreForReading() : openStore()
        return ResponseCache(store: store, maxBytes: config.cacheMaxBytes, logger: logger)
    }

    /// `offpeak submit --job JOB`: the job's spec, checked to take submissions before the store is
    /// opened (a job that does not leaves the workspace untouched).
    public func submissionStream(job: String) throws(OffpeakError) -> SubmissionStream {
        let spec = try loadJob(job)
        try SubmissionStream.check(spec)
        return try SubmissionStream(
            queue: SubmissionQueue(store: try openStore(), spec: spec, config: config), spec: spec)
    }

    /// The configured provider; a missing key is a configuration error (78) naming the variable.
    func makeProvider(cancellation: CancellationFlag? = nil) throws(OffpeakError)
        -> any CompletionProvider
    {
        do {
            return try ProviderFactory.make(
                config: config, environment: environment, logger: logger, cancellation: cancellation)
        } catch {
            throw OffpeakError(.configuration, error.description)
        }
    }

    /// Reads conditions from `sysfsRoot` (else `$OFFPEAK_SYSFS_ROOT`, else `/sys`), NetworkManager
    /// (`$OFFPEAK_NMCLI`, else the `nmcli` on `PATH`, if any) and the workspace's metered and
    /// unmetered interfaces. A root named by the flag or the variable that is not a readable sysfs
    /// tree is a configuration error (`MachineConditions.error`).
    public func gate(sysfsRoot: String? = nil) -> ConditionGate {
        let root =
            sysfsRoot.map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? MachineConditions.defaultRoot(environment: environment)
        return ConditionGate(
            sysfsRoot: root,
            rootNamedBy: sysfsRoot != nil ? "--sysfs-root" : MachineConditions.rootVariable(environment),
            metered: config.meteredInterfaces, unmetered: config.unmeteredInterfaces,
            networkManager: NetworkManagerSource(environment: environment))
    }

    /// What the model `tier` maps to can read and write, from the price table.
    public func limits(for tier: JobSpec.Tier) -> ModelLimits {
        let model = config.model(for: tier)
        return ModelLimits(model: model, price: prices.price(for: model))
    }

    /// Loads and validates one job spec, by name or path.
    public func loadJob(_ argument: String) throws(OffpeakError) -> JobSpec {
        let url = try JobSpecParser.resolve(argument, workspace: workspace.root)
        return try JobSpecParser.load(path: url, workspace: workspace.root)
    }

    /// Runs a validated job: checks the host's name and the key before the store is touched, so a
    /// misconfigured workspace is left as it was; a job whose spec differs from another host's is
    /// refused (`JobSpecAgreement`).
    public func run(_ spec: JobSpec, options: JobRunner.Options = JobRunner.Options()) throws(OffpeakError)
        -> RunOutcome
    {
        let host = try host()
        let provider = try makeProvider(cancellation: options.stop?.calls)
        let store = try openStore()
        try JobSpecAgreement(store: store, host: host).require(spec, now: Date())
        if spec.acceptsSubmissions {
            let queue = SubmissionQueue(store: store, spec: spec, config: config)
            let taken = try SpoolFolder(workspace: workspace, job: spec.name).take(into: queue, spec: spec)
            for refusal in taken.refused { logger.warning("spool: \(refusal)") }
        }
        return try run(spec, options: options, provider: provider, store: store, host: host)
    }

    /// Runs a job on a store the caller holds open (a tick opens it once for all its jobs, and has
    /// taken every spool folder already).
    func run(_ spec: JobSpec, options: JobRunner.Options, store: Store) throws(OffpeakError) -> RunOutcome {
        try run(
            spec, options: options, provider: try makeProvider(cancellation: options.stop?.calls),
            store: store, host: try host())
    }

    /// Helps the process that holds `run` answer its requests (`JobRunner.help`), on a store the
    /// caller holds open.
    func help(_ spec: JobSpec, run: RunRecord, options: JobRunner.Options, store: Store) throws(OffpeakError)
        -> RunOutcome
    {
        let runner = JobRunner(
            workspace: workspace, config: config, store: store,
            provider: try makeProvider(cancellation: options.stop?.calls), prices: prices, logger: logger,
            host: try host())
        return try runner.help(spec, run: run, options: options)
    }

    private func run(
        _ spec: JobSpec, options: JobRunner.Options, provider: any CompletionProvider, store: Store,
        host: String
    )
        throws(OffpeakError) -> RunOutcome
    {
        let runner = JobRunner(
            workspace: workspace, config: config, store: store, provider: provider, prices: prices,
            logger: logger, host: host)
        return try runner.run(spec, options: options)
    }
}

extension WorkspaceContext {
    /// `offpeak audit JOB`: how the job's batched answers compared with single ones, and what
    /// that decided.
    public func audit(_ spec: JobSpec) throws(OffpeakError) -> AuditReport {
        try AuditReport.make(store: try openStoreForReading(), spec: spec, now: Date())
    }
}
