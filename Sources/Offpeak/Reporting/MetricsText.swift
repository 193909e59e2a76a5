import Foundation

/// The workspace's totals in Prometheus' text exposition format, for node_exporter's textfile
/// collector: counters named `offpeak_…_total`, units in the name (`_dollars`, `_seconds`), a
/// `# HELP` and a `# TYPE` line per family, and every label value from a fixed set (lanes, token
/// kinds, states, reason kinds) or from the workspace's own configuration (the price table's window
/// names, the job specs' tags), so no job name, prompt or provider text reaches the scrape.
///
/// Each family lists every value of its label, zeros included, so a series does not vanish and
/// come back as work comes and goes (`rate()` and alerts read a missing series as no data).
struct MetricsText {
    let totals: WorkspaceTotals
    let prices: PriceTable
    let lastTick: LastTick?

    /// The kinds a deferral's reasons count under; `other` for any the metrics do not know.
    static func reasonKind(_ reason: String) -> String {
        // A budget's reason says which budget and its numbers ("daily budget reached, resumes …").
        if reason.contains(ConditionGate.Reason.budget.rawValue) { return "budget" }
        // An unknown condition's reason names the file that could not be read.
        if reason.hasPrefix(ConditionGate.Reason.unknown.rawValue) { return "conditions_unknown" }
        // A wait for cheaper prices names the window, when it opens and what it saves.
        if PriceWait.isSentence(reason) { return "cheaper_prices" }
        switch ConditionGate.Reason(rawValue: reason) {
        case .externalPower: return "external_power"
        case .unmeteredNetwork: return "unmetered_network"
        case .batteryLow: return "battery_low"
        case .offline: return "offline"
        case .budget: return "budget"
        case .cheaperPrices: return "cheaper_prices"
        case .unknown: return "conditions_unknown"
        case nil: return "other"
        }
    }

    /// How many tags the metrics name, the dearest first: tags come from specs and submitted
    /// requests, and a label value per customer must not grow the scrape without bound.
    static let mostTags = 20

    /// The tags' samples: the `mostTags` dearest (`tags` comes dearest first), then the rest as one.
    static func tagSamples(_ tags: [CostLine]) -> [([String: String], Double)] {
        let named = tags.prefix(mostTags).map { (["tag": $0.key], $0.spend.dollars) }
        let rest = tags.dropFirst(mostTags)
        guard !rest.isEmpty else { return Array(named) }
        return named + [(["tag": "(others)"], rest.reduce(0) { $0 + $1.spend.dollars })]
    }

    static let reasonKinds = [
        "external_power", "unmetered_network", "battery_low", "offline", "budget", "cheaper_prices",
        "conditions_unknown", "other",
    ]

    var text: String {
        var out = MetricsFamilies()
        let lanes = totals.lanes.map { LaneSplit($0, prices: prices) }
        let live = lanes?.live.spend ?? totals.spend
        let batch = lanes?.batch.spend ?? Spend()
        out.add(
            "offpeak_spent_dollars_total", .counter,
            "Dollars booked for provider calls, by lane; calls to a model with no price count 0 "
                + "(see offpeak_unpriced_calls_total).",
            [(["lane": "live"], live.dollars), (["lane": "batch"], batch.dollars)]
                + (lanes?.flex.map { [(["lane": "flex"], $0.spend.dollars)] } ?? []))
        out.add(
            "offpeak_naive_dollars_total", .counter,
            "What the same work would have cost the naive way: one live request per item, no cache, "
                + "no batch discount.", [([:], totals.spend.naiveDollars)])
        out.add(
            "offpeak_saved_dollars", .gauge,
            "The naive cost less the dollars spent (negative when offpeak's way cost more).",
            [([:], totals.spend.savedDollars)])
        out.add(
            "offpeak_batch_lane_saved_dollars", .gauge,
            "What the batch lane saved: its usage at the live prices less what it was billed.",
            [([:], lanes?.savedByBatch ?? 0)])
        if let saved = lanes?.savedByFlex {
            out.add(
                "offpeak_flex_lane_saved_dollars", .gauge,
                "What the flex lane saved: its usage at the live prices less what it was billed.",
                [([:], saved)])
        }
        out.add(
            "offpeak_calls_total", .counter,
            "Provider calls made, by lane (answers from the cache are not calls).",
            [(["lane": "live"], Double(live.calls)), (["lane": "batch"], Double(batch.calls))]
                + (lanes?.flex.map { [(["lane": "flex"], Double($0.spend.calls))] } ?? []))
        out.add(
            "offpeak_failed_calls_total", .counter, "Provider calls that brought back no answer.",
            [([:], Double(totals.spend.failedCalls))])
        out.add(
            "offpeak_unpriced_calls_total", .counter,
            "Provider calls to a model with no price: their dollars are not in offpeak_spent_dollars_total.",
            [([:], Double(totals.spend.unpricedCalls))])
        let spend = totals.spend
        out.add(
            "offpeak_tokens_total", .counter,
            "Tokens billed, by kind (input not from the provider's prompt cache, cache reads, cache "
                + "writes, output).",
            [
                (["kind": "input"], Double(spend.inputTokens)),
                (["kind": "cache_read"], Double(spend.cacheReadTokens)),
                (["kind": "cache_write"], Double(spend.cacheWriteTokens)),
                (["kind": "output"], Double(spend.outputTokens)),
            ])
        let open = totals.itemsTotal - totals.itemsDone - totals.itemsFailed - totals.itemsCanceled
        out.add(
            "offpeak_items", .gauge,
            "Items of every run by state: answered, failed for good, dropped by offpeak cancel, and "
                + "open (still to answer).",
            [
                (["state": "done"], Double(totals.itemsDone)),
                (["state": "failed"], Double(totals.itemsFailed)),
                (["state": "canceled"], Double(totals.itemsCanceled)),
                (["state": "open"], Double(max(0, open))),
            ])
        out.add(
            "offpeak_runs", .gauge, "Runs by state.",
            RunState.allCases.map { (["state": $0.rawValue], Double(totals.runs[$0] ?? 0)) })
        var deferred: [String: Int] = [:]
        for reasons in totals.deferredReasons {
            for kind in Set(reasons.map(Self.reasonKind)) { deferred[kind, default: 0] += 1 }
        }
        out.add(
            "offpeak_deferred_jobs", .gauge,
            "Jobs waiting in the deferred queue, by why (a job waiting for two reasons counts under each).",
            Self.reasonKinds.map { (["reason": $0], Double(deferred[$0] ?? 0)) })
        let kinds = Set(CacheKind.allCases.map(\.rawValue)).union(totals.cacheHits.keys).sorted()
        out.add(
            "offpeak_cache_hits_total", .counter, "Lookups the response cache answered, by kind.",
            kinds.map { (["kind": $0], Double(totals.cacheHits[$0] ?? 0)) })
        out.add(
            "offpeak_cache_misses_total", .counter, "Lookups the response cache could not answer, by kind.",
            kinds.map { (["kind": $0], Double(totals.cacheMisses[$0] ?? 0)) })
        if !totals.windows.isEmpty {
            out.add(
                "offpeak_window_spent_dollars_total", .counter,
                "Dollars booked for calls to models whose prices change with the clock, by the price "
                    + "window each was billed in (the window names are the price table's).",
                totals.windows.map { (["window": $0.window], $0.dollars) })
            out.add(
                "offpeak_window_calls_total", .counter,
                "Calls to models whose prices change with the clock, by the price window each was billed in.",
                totals.windows.map { (["window": $0.window], Double($0.calls)) })
            out.add(
                "offpeak_waiting_saved_dollars", .gauge,
                "What waiting for cheaper prices saved: the calls of runs that waited, at the dearest "
                    + "prices each run waited through, less what they cost.",
                [([:], totals.waiting.dollars)])
        }
        if !totals.tags.isEmpty {
            out.add(
                "offpeak_tag_spent_dollars_total", .counter,
                "Dollars booked for the calls of work tagged so (the tags of job specs and submitted "
                    + "requests); a call with several tags counts under each; past the \(Self.mostTags) "
                    + "dearest tags, the rest are summed as (others).",
                Self.tagSamples(totals.tags))
        }
        out.add(
            "offpeak_batches_in_flight", .gauge, "Provider batches made and not yet collected.",
            [([:], Double(totals.batchesInFlight))])
        if let lastTick {
            out.add(
                "offpeak_last_tick_timestamp_seconds", .gauge,
                "When the last offpeak tick started (Unix time).",
                [([:], lastTick.startedAt.timeIntervalSince1970)])
            out.add(
                "offpeak_last_tick_duration_seconds", .gauge, "How long the last offpeak tick took.",
                [([:], lastTick.durationSeconds)])
            out.add(
                "offpeak_last_tick_exit_status", .gauge,
                "The last offpeak tick's exit status (0 done, 75 work left for a later tick, others errors).",
                [([:], Double(lastTick.status))])
        }
        return out.text
    }
}
