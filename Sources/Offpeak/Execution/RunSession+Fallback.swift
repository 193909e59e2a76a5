import Foundation

/// The job's fallback chain, as the pass meets it: each round goes to the first route that is not
/// down (read from the store, so a route another host found down is skipped here too); a call that
/// fails because its provider cannot answer (`ProviderError.callsForFallback`) notes its route down
/// and leaves its items to the next round, which goes to the next route. A route's answers are its
/// own: priced at its model's prices, cached under its model, booked under its provider and model.
/// The batch lane keeps to the configured provider.
extension RunSession {
    /// Picks the route of the next round.
    /// - Returns: the stop when every route of the chain is down.
    mutating func chooseRoute() throws(OffpeakError) -> RunStop? {
        guard let chain = context.chain, lanes.batchAPI == nil else { return nil }
        route.leaving = false
        let now = Date()
        let outages = try context.store.limits.outages(now: now)
        guard let index = chain.routes.firstIndex(where: { outages[$0.key] == nil }) else {
            guard try hasWorkLeft() else { return nil }
            return RunStop(
                state: .interrupted,
                reason: "every provider of the fallback chain is down: \(chain.down(outages))",
                status: .temporaryFailure)
        }
        route.betterDueAt = chain.routes[..<index].compactMap { outages[$0.key]?.until }.min()
        guard index != route.current else { return nil }
        try context.limiter.flush(now: now)  // what the route held and did not use goes back
        let from = chain.routes[route.current]
        let to = chain.routes[index]
        route.current = index
        context.provider = to.provider
        context.limiter = to.limiter
        let news =
            index == 0
            ? "job \(spec.name): \(to.name) is tried again, its outage over; calls go back to it from \(from.name)"
            : "job \(spec.name): calls go to the fallback \(to.name): \(chain.down(outages))"
        context.logger.warning("\(news)")
        return nil
    }

    /// Whether a route before the current one may be tried again: the round's calls not started
    /// yet are planned again, for it.
    var betterRouteDue: Bool {
        route.betterDueAt.map { Date() >= $0 } ?? false
    }

    /// What a failed call leaves when the chain takes it: its route noted down until the time its
    /// provider asked for (or `retry_primary_after`), its items left for the next round, which goes
    /// to the next route. Nil when the chain does not: the failure is the user's or the request's,
    /// no route after it is up, or a stop was asked for.
    mutating func fallBack(_ error: ProviderError, _ done: CallsInFlight.Finished, ledger: LedgerEntry)
        throws(OffpeakError) -> CallReceipt?
    {
        guard let chain = context.chain, lanes.batchAPI == nil, error.callsForFallback,
            options.stop?.isRequested != true
        else { return nil }
        let now = Date()
        let failed = chain.routes[route.current]
        let asked = done.reply.rateLimit.retryAt.map { max($0, now.addingTimeInterval(1)) }
        let reason = context.provider.redactor.redact(error.description)
        try context.store.limits.noteOutage(
            ProviderOutage(
                key: failed.key, until: asked ?? now.addingTimeInterval(chain.retryAfter), reason: reason,
                host: context.host, notedAt: now))
        let outages = try context.store.limits.outages(now: now)
        guard chain.routes.contains(where: { outages[$0.key] == nil }) else { return nil }
        plan.replanRound = true
        route.leaving = true
        var ledger = ledger
        ledger.failed = true
        return CallReceipt(ledger: ledger)  // its items stay pending, for the next route
    }

    /// Whether a fallback answers the pass's calls now, not the configured provider.
    var onFallback: Bool { context.chain != nil && route.current > 0 }

    /// A stored request as the current route asks it: its model, and the cache key its answer is kept
    /// under; the configured provider's own as stored.
    func routed(_ entry: (record: RequestRecord, request: CompletionRequest))
        -> (record: RequestRecord, request: CompletionRequest)
    {
        guard let chain = context.chain, route.current > 0 else { return entry }
        var (record, request) = entry
        request.model = chain.routes[route.current].model
        record.cacheKey = RequestPlanner.cacheKey(provider: context.provider.kind, request: request)
        return (record, request)
    }
}
