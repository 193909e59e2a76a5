import Foundation
import Logging

/// What a failed call does to its items and to the run (DESIGN.md, "Providers": retries).
///
/// Every failed call is a ledger row (a call made, no tokens). Then, in order: a stop request
/// keeps the items as they were; a provider that cannot be reached makes the run wait, offline;
/// failures alike call after call (`FailureStreak`) stop the run as the configuration's or the
/// provider's fault, without charging the items an attempt; a passing server error interrupts the
/// run; a refused key or a wrong endpoint stops it; anything else is the items' own refusal, retried
/// later with backoff until their attempts run out.
extension RunSession {
    /// - Returns: a `Stop` when the run cannot go on now.
    mutating func handle(_ error: ProviderError, call: PlannedCall, ledger: LedgerEntry) throws(OffpeakError)
        -> Stop?
    {
        let store = runner.store
        if let stop = options.stop, stop.isRequested {
            // A call aborted when the grace period ran out: nothing of it is kept, and it is not the
            // items' fault.
            try store.commitCall(run: run, ledger: ledger, results: [], lease: runner.lease)
            return Stop(
                state: .interrupted, reason: "stopped by \(stop.reason ?? "a signal")",
                status: .temporaryFailure)
        }
        if case .unreachable = error {
            // Nothing answers: the work waits, offline, and the next tick tries again.
            try countAttempt(call, error: error, ledger: ledger)
            return Stop(
                state: .waiting, reason: "offline: \(error.description)", status: .temporaryFailure,
                deferred: [.offline])
        }
        if case .http = error {
            var streak = FailureStreak(run: run)
            streak.failed(error.description, requests: call.requests.map(\.id))
            streak.store(in: &run)
            if let verdict = streak.verdict(for: error, unanswered: unansweredItems) {
                try store.commitCall(run: run, ledger: ledger, results: [], lease: runner.lease)
                return stop(for: verdict, error: error, streak: streak)
            }
        }
        if error.isTransient {
            try countAttempt(call, error: error, ledger: ledger)
            return Stop(state: .interrupted, reason: error.description, status: .temporaryFailure)
        }
        if error.stopsTheRun {
            // The key or the endpoint is wrong for every item: the run waits, resumable, for the fix.
            try store.commitCall(run: run, ledger: ledger, results: [], lease: runner.lease)
            return Stop(state: .interrupted, reason: error.description, status: .configuration)
        }
        // A refused batched prompt is asked again in smaller pieces; a refused single request is
        // retried later, with backoff, until the job's attempts run out.
        if call.isBatched {
            try store.commitCall(
                run: run, ledger: ledger, results: [],
                retry: call.requests.map { ($0.id, error.description) },
                lease: runner.lease)
        } else {
            try retryLater(call, error: error.description, ledger: ledger)
        }
        return nil
    }

    /// Items of the run with no answer yet (and not failed).
    private var unansweredItems: Int {
        max(0, run.itemsTotal - run.itemsDone - run.itemsFailed)
    }

    /// The run stops, resumable; its items keep their attempts for faults of their own.
    private func stop(for verdict: FailureStreak.Verdict, error: ProviderError, streak: FailureStreak) -> Stop
    {
        switch verdict {
        case .configuration:
            return Stop(
                state: .interrupted,
                reason: "the provider refused the last \(streak.calls) calls alike, with different items: "
                    + "\(error.description); that is the configuration (model name, key, base URL), "
                    + "not the items: fix it and run again",
                status: .configuration)
        case .providerFailing:
            return Stop(
                state: .interrupted,
                reason: "the provider failed the last \(streak.calls) calls alike: \(error.description); "
                    + "it is failing, not the items, which wait for the next run",
                status: .unavailable)
        }
    }

    /// Each item of the call waits `RetryBackoff` before its next attempt, or fails for good once
    /// it has had the job's `max_attempts`; the error says which ("retrying at T (attempt n of N)").
    func retryLater(_ call: PlannedCall, error: String, ledger: LedgerEntry? = nil) throws(OffpeakError) {
        let now = Date()
        let (failed, rest) = lastAttempts(call, error: error)
        let later = rest.map { record in
            let attempt = record.attempts + 1
            let at = now + RetryBackoff.delay(afterAttempt: attempt)
            let why =
                "\(error); retrying at \(Timestamp.text(at)) (attempt \(attempt + 1) of \(spec.maxAttempts))"
            return (id: record.id, reason: why, at: at)
        }
        try runner.store.commitCall(
            run: run, ledger: ledger, results: [], failed: failed, later: later, lease: runner.lease)
    }

    /// The provider's trouble, not the items': they are tried again on the next pass, but a call
    /// that has failed `max_attempts` times fails its items rather than stopping every run forever.
    private func countAttempt(_ call: PlannedCall, error: ProviderError, ledger: LedgerEntry)
        throws(OffpeakError)
    {
        let (failed, rest) = lastAttempts(call, error: error.description)
        try runner.store.commitCall(
            run: run, ledger: ledger, results: [], retry: rest.map { ($0.id, error.description) },
            failed: failed, lease: runner.lease)
    }

    /// Splits the call's items into those this failure leaves with no attempt (failed, with why)
    /// and the rest.
    private func lastAttempts(_ call: PlannedCall, error: String)
        -> (failed: [(id: String, reason: String)], rest: [RequestRecord])
    {
        let spent = call.requests.filter { $0.attempts + 1 >= spec.maxAttempts }
        return (
            spent.map { ($0.id, "\(error); gave up after \(Plural.count($0.attempts + 1, "attempt"))") },
            call.requests.filter { $0.attempts + 1 < spec.maxAttempts }
        )
    }
}
