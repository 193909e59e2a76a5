import Foundation

extension WorkspaceContext {
    /// The store this workspace uses: `OFFPEAK_STORE` when set, else offpeak.yaml's `store:`.
    func storeLocation() throws(OffpeakError) -> StoreLocation {
        try StoreLocation.resolve(configured: config.store, environment: environment)
    }

    /// The name this host goes by in the store (`HostName`): `OFFPEAK_HOST` when set, else
    /// offpeak.yaml's `host:`, else the machine's hostname.
    func host() throws(OffpeakError) -> String {
        try HostName.resolve(configured: config.host, environment: environment)
    }

    /// How to open this workspace's store (`storeLocation()`).
    func storeOpening() throws(OffpeakError) -> Store.Opening {
        Store.Opening(
            workspace: workspace, location: try storeLocation(), environment: environment, logger: logger)
    }

    /// The store for a command that writes.
    func openStore() throws(OffpeakError) -> Store {
        try Store.open(try storeOpening())
    }

    /// The store for a command that only reads it: read-only when this process cannot write it.
    public func openStoreForReading() throws(OffpeakError) -> Store {
        try Store.openForReading(try storeOpening())
    }

    /// The store read-only, or nil when the workspace has none yet (`Store.openReadOnlyIfPresent`):
    /// for what only reports on a store some command made, and must not make one.
    func openStoreIfPresent() throws(OffpeakError) -> Store? {
        try Store.openReadOnlyIfPresent(try storeOpening())
    }

    /// `offpeak store info`: the store opened as a reporting command opens it (a PostgreSQL store's
    /// schema brought up to date under its advisory lock, as the SQLite store's is), then described.
    public func storeInfo() throws(OffpeakError) -> StoreInfo {
        try openStoreForReading().info()
    }
}

extension WorkspaceContext {
    /// `offpeak store copy --to TARGET`: copies the workspace's store (`storeLocation()`) into
    /// `target` (`sqlite`, the workspace's file, or a `postgresql://` URL) while no tick writes it
    /// (`StoreCopy.copy` holds the store's tick lock).
    /// - Throws: `.usage` when `target` is not a store, is the store in use, or already holds data;
    ///   `.temporaryFailure` while a tick runs on the store; the stores' faults.
    public func copyStore(to target: String) throws(OffpeakError) -> StoreCopyOutcome {
        let destination: StoreLocation
        do { destination = try StoreLocation.parse(target, defaultUser: StoreLocation.osUser) } catch {
            throw OffpeakError(.usage, "--to: \(error.description)")
        }
        return try StoreCopy.copy(
            from: try storeLocation(), to: destination, workspace: workspace, environment: environment,
            logger: logger)
    }
}

extension WorkspaceContext {
    /// `offpeak store prune [--dry-run]`: every finished run past `retention.runs` pruned now, and
    /// the ledger rows of every pruned run past `retention.ledger` rolled up by day (`Store.prune`),
    /// and on SQLite the file shrunk back with one whole `VACUUM` if it was made before offpeak made
    /// stores that give pages back as they go.
    /// - Parameter now: the moment the horizon is counted back from (tests move it).
    public func pruneStore(dryRun: Bool, now: Date? = nil) throws(OffpeakError) -> StorePruneOutcome {
        let now = now ?? Date()
        guard let keep = config.keepRuns else {
            return StorePruneOutcome(keep: nil, keepLedger: nil, now: now, dryRun: dryRun)
        }
        let store = try openStore()
        var outcome = StorePruneOutcome(
            keep: keep, keepLedger: config.keepLedgerRows, now: now, dryRun: dryRun)
        outcome.report = try store.prune(
            keeping: keep, keepingLedger: config.keepLedgerRows, now: now, limit: nil, dryRun: dryRun)
        if !dryRun { outcome.sizes = try store.reclaimSpace(whole: true) }
        return outcome
    }
}
