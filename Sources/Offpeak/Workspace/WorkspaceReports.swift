import Foundation

/// The workspace's reports, read from one store opened for reading: each command reads its
/// report through here, and a page that shows several of them (the dashboard) opens the store
/// once for all, so both show the same numbers from the same code.
public struct WorkspaceReports: Sendable {
    let context: WorkspaceContext
    let store: Store

    /// The ledger by `grouping`, the batch lane's saving priced with this workspace's prices.
    public func costs(by grouping: CostReport.Grouping) throws(OffpeakError) -> CostReport {
        try CostReport.make(store: store, by: grouping, prices: context.prices)
    }

    /// Recent runs, batches out, and spend against the workspace's budgets.
    public func status(limit: Int, now: Date) throws(OffpeakError) -> StatusReport {
        try StatusReport.make(store: store, now: now, limit: limit, budget: context.config.budget)
    }

    /// One run: its requests by state, batches out, audits and outputs.
    public func run(id: String, now: Date) throws(OffpeakError) -> RunReport {
        try RunReport.make(store: store, runID: id, now: now)
    }

    /// Every host that has ticked against the store, with what it holds now.
    public func hosts(now: Date) throws(OffpeakError) -> HostReport {
        try HostReport.make(store: store, now: now)
    }

    /// The deferred queue, with the conditions read now.
    public func queue(conditions: MachineConditions?) throws(OffpeakError) -> QueueReport {
        try QueueReport.make(store: store, conditions: conditions)
    }

    /// The scheduled jobs, soonest due first (those that never fire last).
    func schedules() throws(OffpeakError) -> [ScheduleRecord] {
        try store.schedules.scheduleRecords().sorted {
            ($0.nextDueAt ?? .distantFuture, $0.job) < ($1.nextDueAt ?? .distantFuture, $1.job)
        }
    }

    /// The cache's entries, size, hits and what it saved.
    public func cacheStats() throws(OffpeakError) -> CacheStatsReport {
        CacheStatsReport(
            try ResponseCache(store: store, maxBytes: context.config.cacheMaxBytes, logger: context.logger)
                .stats())
    }
}

extension WorkspaceContext {
    /// The reports, from the store opened for reading once.
    public func reports() throws(OffpeakError) -> WorkspaceReports {
        WorkspaceReports(context: self, store: try openStoreForReading())
    }
}
