import Foundation

/// Calls whose process died with them in flight: paid for (a provider bills work whose caller
/// left, and an answer that reached a killed process before its commit), and in no ledger row.
///
/// Every call is written down before it is sent, as its budget reservation (`BudgetAsk.call`: the
/// ledger row it would leave, at its expected usage), and the call's commit replaces that with its
/// real row in one transaction. A reservation whose owner no longer holds the run (killed, or its
/// lease taken over) is settled by whoever finds it — the process that takes the run over, the next
/// budget check, the next tick (`BudgetRules.settleStaleReservations`) — and a call's is booked
/// here: at the time it was sent, marked `lost` and `usage_estimated`, its dollars the expected
/// price, with no naive price (nothing the naive way would have paid for), so `costs`, budgets and
/// metrics count it. A later answer to the same request is a second call, as it truly is.
///
/// A call written down but killed before its request left the machine is booked too: the window is
/// the time from the reservation's commit to the request's first byte, microseconds against a
/// call's seconds, and the ledger errs on the side of what may have been billed.
enum LostCalls {
    /// Books `owner`'s calls in flight on `runID` as lost; the caller drops the reservations.
    static func book(_ sql: any SQLConnection, runID: String, owner: String) throws(OffpeakError) {
        try sql.execute(
            """
            INSERT INTO ledger (at, job, run_id, provider, model, tier, downgraded, items, input_tokens,
                output_tokens, cache_read_tokens, cache_write_tokens, dollars, naive_dollars, batch_api,
                cache_hit, usage_estimated, latency_ms, failed, unpriced, host, search_requests, audit, flex,
                lost, price_window, tags)
            SELECT reserved_at, job, run_id, provider, model, tier, downgraded, items, input_tokens,
                output_tokens, 0, 0, expected_dollars, 0.0, \(false), \(false), \(true), 0, \(false), unpriced,
                host, search_requests, audit, flex, \(true), price_window, tags
            FROM budget_reservations
            WHERE run_id = \(runID) AND owner = \(owner) AND model IS NOT NULL
            ORDER BY id
            """)
    }
}
