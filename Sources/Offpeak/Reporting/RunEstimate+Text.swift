import Foundation

/// `offpeak estimate` as a person reads it: what the run would do, a table of the lanes, and how
/// long it would take.
extension RunEstimate {
    public var text: String {
        var lines = ["estimate for job \(job) (nothing sent, nothing written): \(model) on \(provider)"]
        if let resumesRun {
            var line = "resumes run \(resumesRun): \(Plural.count(itemsDoneBefore, "item")) already answered"
            if itemsInBatch > 0 { line += ", \(itemsInBatch) in a provider batch" }
            lines.append(line)
        }
        var items = "items: \(self.items); \(itemsCached) answered from the cache, \(itemsToAsk) to ask"
        if itemsRefused > 0 { items += ", \(itemsRefused) too long for the model (failed unsent)" }
        lines.append(items)
        if longDocuments > 0 {
            var line =
                "long documents: \(longDocuments) in \(Plural.count(chunks, "chunk")), summarized first, "
                + "then combined"
            if stepsCached > 0 { line += " (\(Plural.count(stepsCached, "step")) answered from the cache)" }
            lines.append(line)
        }
        lines.append("answers: \(outputNote)")
        lines.append("")
        let table = TextTable(columns: [
            "LANE", "CALLS", "BATCHED", "INPUT", "CACHE READ", "CACHE WRITE", "OUTPUT", "COST",
        ])
        func add(_ name: String, _ lane: Lane) {
            table.add([
                name, "\(lane.calls)", "\(lane.batchedCalls)", "\(lane.inputTokens)",
                "\(lane.cacheReadTokens)",
                "\(lane.cacheWriteTokens)", "\(lane.outputTokens)", cost(lane.dollars),
            ])
        }
        add(self.lane == "live" ? "live *" : "live", live)
        if let batch { add(self.lane == "batch" ? "batch *" : "batch", batch) }
        if let flex { add(self.lane == "flex" ? "flex *" : "flex", flex) }
        add("naive", naive)
        lines.append(table.render().dropLast(1).description)
        var chosen = "* the lane the run takes"
        if let laneNote { chosen += ": \(laneNote)" }
        if batch == nil { chosen += "; \(provider) has no batch API" }
        lines.append(chosen)
        lines.append("naive: one request per item, whole, with no cache, no batching and no prompt cache")
        if live.searches > 0 {
            lines.append(
                "web searches: up to \(live.searches) (each call's max_uses), priced at most in COST"
                    + (searchesPriced ? "" : "; \(model) has no price per search: they are counted as 0"))
        }
        lines.append("time: \(timeSentence)")
        lines += plansText
        if unpriced { lines.append("\(model) has no price: its dollars are unknown, shown as 0") }
        lines += notes
        return lines.joined(separator: "\n") + "\n"
    }

    /// The plans of a model whose prices change with the clock: each lane now and at the next
    /// cheaper prices, marked `*` where the run would take it.
    private var plansText: [String] {
        guard let plans, let first = plans.first else { return [] }
        var head = "prices change with the clock: \(first.window) now"
        if let later = plans.first(where: { $0.starts > first.starts }) {
            head += ", \(later.window) from \(time(later.starts))"
        }
        let table = TextTable(columns: ["PLAN", "STARTS", "FINISHES", "COST"])
        for plan in plans {
            let when = plan.starts == first.starts ? "now" : "wait"
            table.add([
                "\(plan.lane), \(when) (\(plan.window))" + (plan.takes ? " *" : ""), time(plan.starts),
                plan.finishes.map(time) ?? "unknown", cost(plan.dollars),
            ])
        }
        var lines = ["", head, table.render().dropLast(1).description]
        let taken = plans.contains(where: \.takes) ? "* the plan the run takes" : nil
        switch (taken, planNote) {
        case (let taken?, let note?): lines.append("\(taken): \(note)")
        case (let taken?, nil): lines.append(taken)
        case (nil, let note?): lines.append(note)
        case (nil, nil): break
        }
        return lines
    }

    private func time(_ date: Date) -> String {
        let zone = plansTimeZone.flatMap(TimeZone.init(identifier:)) ?? .gmt
        return PriceWait.time(date, in: zone, now: plans?.first?.starts ?? date)
    }

    private func cost(_ dollars: Double) -> String {
        unpriced ? "unpriced" : Money.dollars(dollars)
    }

    /// How long the run would take.
    private var timeSentence: String {
        if lane == "batch" { return "a provider batch answers within 24 hours" }
        if lane == "flex" {
            return "flex processing answers more slowly than live, up to 15 minutes a call, and may refuse "
                + "calls for capacity (asked again later, or live near the deadline); "
                + "\(Plural.count(live.calls, "call")), \(inFlight) at a time"
        }
        if live.calls == 0 { return "no call to make" }
        guard let wallSeconds else {
            return "unknown: no call to \(model) is measured in this workspace yet "
                + "(\(Plural.count(live.calls, "call")), \(inFlight) at a time)"
        }
        return
            "about \(Self.duration(wallSeconds)) (\(Plural.count(live.calls, "call")), \(inFlight) at a time, "
            + "at \(model)'s measured speed)"
    }

    /// `45 s`, `12 min`, `3 h 20 min`: as precise as a person plans with.
    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.up))
        if whole < 60 { return "\(max(1, whole)) s" }
        if whole < 3600 { return "\((whole + 59) / 60) min" }
        let minutes = (whole + 59) / 60
        return "\(minutes / 60) h \(minutes % 60) min"
    }
}
