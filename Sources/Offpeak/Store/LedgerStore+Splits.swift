import Foundation

/// The ledger's calls to models whose prices change with the clock, by the price window each was
/// billed in (`LedgerEntry.priceWindow`): those of one key (a job, a model, a local day; '' for
/// them all) in one window.
struct WindowShare: Sendable, Equatable, Codable {
    var key: String
    var window: String
    var calls: Int
    var dollars: Double
}

/// What window shares are keyed by.
enum WindowKey: Sendable {
    case job, model, day, all
}

/// What waiting for cheaper prices saved (`LedgerEntry.waitingSaved`): the calls of runs that
/// waited, and their usage at the dearest prices each run waited through, less what they cost.
struct WaitingSavings: Sendable, Equatable, Codable {
    var calls = 0
    var dollars = 0.0
}

/// The reports over the ledger's price windows, waiting's savings and tags, written once for both
/// engines: each reads a partial index (`LedgerWindowsSchema`) that holds every column it reads, a
/// window at a time (the windows found by one index seek each), in the order of its key and `id`,
/// or of `at` and `id`, as the other reports add dollars, so both engines print the same cents.
enum LedgerSplits {
    /// The windows calls were billed in, in order: each the first after the one before, one index
    /// seek each.
    static func windows(_ sql: any SQLConnection) throws(OffpeakError) -> [String] {
        try distinct(sql, "price_window", where: "")
    }

    /// The values of `column` in the windowed rows `condition` selects, in order: each the first
    /// after the one before (none is ''), found by a seek of the index led by it.
    private static func distinct(_ sql: any SQLConnection, _ column: String, where condition: SQLStatement)
        throws(OffpeakError) -> [String]
    {
        var values: [String] = []
        while true {
            let row = try sql.rows(
                """
                SELECT MIN(\(unescaped: column)) AS v FROM ledger
                WHERE price_window <> '' \(condition) AND \(unescaped: column) > \(values.last ?? "")
                """
            ).first
            guard let value = try row.flatMap({ row throws(OffpeakError) in try row("v", as: String?.self) })
            else { return values }
            values.append(value)
        }
    }

    /// The calls and dollars of the windowed rows `condition` selects, added in `order` (no
    /// `GROUP BY`: the rows come sorted from their index, and are summed as they come).
    private static func sum(_ sql: any SQLConnection, _ condition: SQLStatement, order: String)
        throws(OffpeakError) -> (calls: Int, dollars: Double)
    {
        guard
            let row = try sql.rows(
                """
                SELECT CAST(COALESCE(SUM(calls) FILTER (WHERE NOT cache_hit), 0) AS BIGINT) AS calls,
                    COALESCE(SUM(dollars), 0.0) AS dollars
                FROM (
                    SELECT cache_hit, calls, dollars FROM ledger
                    WHERE price_window <> '' \(condition) ORDER BY \(unescaped: order)
                ) AS windowed
                """
            ).first
        else { return (0, 0) }
        return (try row("calls"), try row("dollars"))
    }

    /// The windowed rows summed by `key` (a job, a model; '' for all) and window.
    static func windowShares(_ sql: any SQLConnection, key: WindowKey) throws(OffpeakError) -> [WindowShare] {
        let column: String? =
            switch key {
            case .job: "job"
            case .model: "model"
            case .day, .all: nil
            }
        var shares: [WindowShare] = []
        for window in try windows(sql) {
            let inWindow: SQLStatement = "AND price_window = \(window)"
            guard let column else {
                let all = try sum(sql, inWindow, order: "at, id")
                shares.append(WindowShare(key: "", window: window, calls: all.calls, dollars: all.dollars))
                continue
            }
            for value in try distinct(sql, column, where: inWindow) {
                let part = try sum(sql, "\(inWindow) AND \(unescaped: column) = \(value)", order: "id")
                shares.append(
                    WindowShare(key: value, window: window, calls: part.calls, dollars: part.dollars))
            }
        }
        return shares.sorted { ($0.key, $0.window) < ($1.key, $1.window) }
    }

    /// Window shares by local day, newest first: only the days with calls in a window are visited,
    /// as `LedgerDay.costs` walks the ledger.
    static func windowSharesByDay(_ sql: any SQLConnection, calendar: Calendar) throws(OffpeakError)
        -> [WindowShare]
    {
        var shares: [WindowShare] = []
        for window in try windows(sql) {
            let inWindow: SQLStatement = "AND price_window = \(window)"
            // The walk `costs --by day` makes (`LedgerDay.costs`), over this window's rows.
            let days = try LedgerDay.costs(
                calendar: calendar,
                firstCall: { (start: Date?) throws(OffpeakError) -> Date? in
                    try sql.rows(
                        """
                        SELECT MIN(at) AS at FROM ledger
                        WHERE price_window <> '' \(inWindow) AND (\(start == nil) OR at >= \(start ?? Date()))
                        """
                    ).first.flatMap { row throws(OffpeakError) in try row("at", as: Date?.self) }
                },
                spend: { (day: LedgerDay) throws(OffpeakError) -> Spend in
                    let part = try sum(
                        sql, "\(inWindow) AND at >= \(day.start) AND at < \(day.end)", order: "at, id")
                    var spend = Spend()
                    (spend.calls, spend.dollars) = (part.calls, part.dollars)
                    return spend
                })
            shares += days.map {
                WindowShare(key: $0.key, window: window, calls: $0.spend.calls, dollars: $0.spend.dollars)
            }
        }
        return shares.sorted { ($1.key, $0.window) < ($0.key, $1.window) }
    }

    static func waitingSavings(_ sql: any SQLConnection) throws(OffpeakError) -> WaitingSavings {
        guard
            let row = try sql.rows(
                """
                SELECT CAST(COALESCE(SUM(calls), 0) AS BIGINT) AS calls, COALESCE(SUM(waiting_saved), 0.0) AS saved
                FROM (SELECT calls, waiting_saved FROM ledger WHERE waiting_saved <> 0 ORDER BY id) AS waited
                """
            ).first
        else { return WaitingSavings() }
        return WaitingSavings(calls: try row("calls"), dollars: try row("saved"))
    }

    /// Spend by tag, most expensive first (a call made with several tags counts under each), and
    /// the spend of every tagged call, each once.
    static func costsByTag(_ sql: any SQLConnection) throws(OffpeakError) -> (
        lines: [CostLine], tagged: Spend
    ) {
        var byTag: [String: Spend] = [:]
        var tagged = Spend()
        // Each set of tags found by one seek of the index, then summed in the order of `id`.
        var set = ""
        while true {
            let row = try sql.rows("SELECT MIN(tags) AS tags FROM ledger WHERE tags <> '' AND tags > \(set)")
                .first
            guard
                let next = try row.flatMap({ row throws(OffpeakError) in try row("tags", as: String?.self) })
            else { break }
            set = next
            let spend = try SpendRules.sum(sql, where: "tags <> '' AND tags = \(set)", orderedBy: "id")
            tagged.add(spend)
            for tag in Tags.tags(set) { byTag[tag, default: Spend()].add(spend) }
        }
        let lines = byTag.map { CostLine(key: $0.key, spend: $0.value) }.sorted {
            ($1.spend.dollars, $0.key) < ($0.spend.dollars, $1.key)
        }
        return (lines, tagged)
    }
}

extension LedgerStore where Self: SQLEngine {
    func windowShares(by key: WindowKey, calendar: Calendar) throws(OffpeakError) -> [WindowShare] {
        try reading { sql throws(OffpeakError) in
            key == .day
                ? try LedgerSplits.windowSharesByDay(sql, calendar: calendar)
                : try LedgerSplits.windowShares(sql, key: key)
        }
    }

    func waitingSavings() throws(OffpeakError) -> WaitingSavings {
        try alone { sql throws(OffpeakError) in try LedgerSplits.waitingSavings(sql) }
    }

    func costsByTag() throws(OffpeakError) -> (lines: [CostLine], tagged: Spend) {
        try alone { sql throws(OffpeakError) in try LedgerSplits.costsByTag(sql) }
    }
}
