import Foundation

/// The workspace's totals as one snapshot of the store: what the Prometheus metrics report. Read
/// in one transaction, so a scrape never sees spend from after its item counts; read from the
/// store, not from a process's memory, so every process that writes the metrics writes the same.
struct WorkspaceTotals: Sendable, Equatable {
    /// The whole ledger, cache hits included (as `costs`' total).
    var spend = Spend()
    /// The ledger by lane and model, or nil when the workspace never made a provider batch.
    var lanes: [LaneModelSpend]?
    /// Items of every run (steps of long items left out): answered, failed for good, dropped by
    /// `offpeak cancel`, and all of them.
    var itemsTotal = 0
    var itemsDone = 0
    var itemsFailed = 0
    var itemsCanceled = 0
    /// Runs by state (a state with none is absent).
    var runs: [RunState: Int] = [:]
    /// Each open deferral's reasons, as stored (`ConditionGate.Reason` words and others).
    var deferredReasons: [[String]] = []
    /// Cache hits and misses since the store began, by cache kind (`answer`, `source`).
    var cacheHits: [String: Int] = [:]
    var cacheMisses: [String: Int] = [:]
    /// Provider batches made and not yet collected or failed.
    var batchesInFlight = 0
    /// Calls to models whose prices change with the clock, by the window each was billed in.
    var windows: [WindowShare] = []
    /// What waiting for cheaper prices saved.
    var waiting = WaitingSavings()
    /// Spend by tag.
    var tags: [CostLine] = []

    /// The ledger's splits (`LedgerSplits`), read in the snapshot the rest is read in.
    mutating func readSplits(_ sql: any SQLConnection) throws(OffpeakError) {
        windows = try LedgerSplits.windowShares(sql, key: .all)
        waiting = try LedgerSplits.waitingSavings(sql)
        tags = try LedgerSplits.costsByTag(sql).lines
    }
}
