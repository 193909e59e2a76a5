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
    /// `offpeak store prune [--dry-run]`: every finished run past `retention.runs` pruned now
    /// (`Store.prune`), and on SQLite the file shrunk back with one whole `VACUUM` if it was made
    /// before offpeak made stores that give pages back as they go.
    /// - Parameter now: the moment the horizon is counted back from (tests move it).
    public func pruneStore(dryRun: Bool, now: Date? = nil) throws(OffpeakError) -> StorePruneOutcome {
        let now = now ?? Date()
        guard let keep = config.keepRuns else {
            return StorePruneOutcome(keep: nil, before: now, dryRun: dryRun)
        }
        let store = try openStore()
        var outcome = StorePruneOutcome(keep: keep, before: now - keep, dryRun: dryRun)
        outcome.report = try store.prune(keeping: keep, now: now, limit: nil, dryRun: dryRun)
        if !dryRun { outcome.sizes = try store.reclaimSpace(whole: true) }
        return outcome
    }
}

/// What `offpeak store prune` did, or would do.
public struct StorePruneOutcome: Sendable, Encodable {
    /// `retention.runs`; nil: retention is off.
    var keep: TimeInterval?
    /// Runs finished before this are pruned.
    var before: Date
    var dryRun: Bool
    var report = PruneReport()
    /// The SQLite file's size before and after, in bytes; nil on PostgreSQL.
    var sizes: (before: Int64, after: Int64)?

    init(keep: TimeInterval?, before: Date, dryRun: Bool) {
        self.keep = keep
        self.before = before
        self.dryRun = dryRun
    }

    public var text: String {
        guard let keep else {
            return "retention is off (retention: off in offpeak.yaml): nothing is pruned\n"
        }
        var out =
            "retention: finished runs are kept \(Int(keep / 86_400)) days; "
            + "those finished before \(Timestamp.text(before, in: TimeZone(identifier: "UTC") ?? .current))"
        if report.runs == 0 { return out + ": none to prune\n" }
        out += "\n\(dryRun ? "would prune" : "pruned") \(report.sentence); the ledger is kept whole\n"
        if let sizes {
            out +=
                "the SQLite file: \(ReportFormat.bytes(Int(sizes.before))) -> \(ReportFormat.bytes(Int(sizes.after)))\n"
        }
        return out
    }

    enum CodingKeys: String, CodingKey { case keepDays, before, dryRun, pruned, bytesBefore, bytesAfter }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(keep.map { $0 / 86_400 }, forKey: .keepDays)
        try container.encode(before, forKey: .before)
        try container.encode(dryRun, forKey: .dryRun)
        try container.encode(report, forKey: .pruned)
        try container.encodeIfPresent(sizes?.before, forKey: .bytesBefore)
        try container.encodeIfPresent(sizes?.after, forKey: .bytesAfter)
    }
}
