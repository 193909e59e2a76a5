import Foundation

/// What a failed call does to its items and to the run (DESIGN.md, "Providers": retries).
///
/// In order: a stop request keeps the items as they were; a provider that cannot be reached makes
/// the run wait, offline; failures alike call after call (`FailureStreak`) stop the run as the
/// configuration's or the provider's fault without charging the items an attempt; a passing server
/// error interrupts the run; a refused key or a wrong endpoint stops it, resumable; anything else
/// is the items' own refusal: a batched prompt is asked again in smaller pieces, a single request
/// later, with backoff, until the job's attempts run out.
struct FailurePolicy: Sendable {
    let maxAttempts: Int

    /// - Parameters:
    ///   - ledger: the failed call's ledger row (a call made, no tokens).
    ///   - streak: the run's streak of alike failures; updated for HTTP errors.
    ///   - unanswered: items of the run with no answer yet, for the streak's verdict.
    ///   - stop: raised when a stop was asked for (then the call was aborted, not failed).
    func receipt(
        for error: ProviderError, call: PlannedCall, ledger: LedgerEntry, streak: inout FailureStreak,
        unanswered: Int, stop: StopSignal?, now: Date
    ) -> CallReceipt {
        var receipt = CallReceipt(ledger: ledger)
        if let stop, stop.isRequested {
            // A call aborted when the grace period ran out: nothing of it is kept, and it is not the
            // items' fault.
            receipt.stop = .signal(stop.reason)
            return receipt
        }
        if case .unreachable = error {
            // Nothing answers: the work waits, offline, and the next tick tries again.
            countAttempt(call, error: error.description, into: &receipt)
            receipt.stop = RunStop(
                state: .waiting, reason: "offline: \(error.description)", status: .temporaryFailure,
                deferred: [.offline])
            return receipt
        }
        if case .http = error {
            streak.failed(error.description, requests: call.requests.map(\.id))
            if let verdict = streak.verdict(for: error, unanswered: unanswered) {
                receipt.stop = Self.stop(for: verdict, error: error, calls: streak.calls)
                return receipt
            }
        }
        if error.isTransient {
            countAttempt(call, error: error.description, into: &receipt)
            receipt.stop = RunStop(state: .interrupted, reason: error.description, status: .temporaryFailure)
            return receipt
        }
        if error.stopsTheRun {
            // The key or the endpoint is wrong for every item: the run waits, resumable, for the fix.
            receipt.stop = RunStop(state: .interrupted, reason: error.description, status: .configuration)
            return receipt
        }
        if call.isBatched {
            receipt.retry = call.requests.map { ($0.id, error.description) }
        } else {
            retryLater(call, error: error.description, now: now, into: &receipt)
        }
        return receipt
    }

    /// Each item of the call waits `RetryBackoff` before its next attempt, or fails for good once
    /// it has had the job's `max_attempts`; the error says which ("retrying at T (attempt n of N)").
    func retryLater(_ call: PlannedCall, error: String, now: Date, into receipt: inout CallReceipt) {
        let (failed, rest) = lastAttempts(call, error: error)
        receipt.failed += failed
        receipt.later += rest.map { record in
            let attempt = record.attempts + 1
            let at = now + RetryBackoff.delay(afterAttempt: attempt)
            let why = "\(error); retrying at \(Timestamp.text(at)) (attempt \(attempt + 1) of \(maxAttempts))"
            return (id: record.id, reason: why, at: at)
        }
    }

    /// The provider's trouble, not the items': they are tried again on the next pass, but a call
    /// that has failed `max_attempts` times fails its items rather than stopping every run forever.
    private func countAttempt(_ call: PlannedCall, error: String, into receipt: inout CallReceipt) {
        let (failed, rest) = lastAttempts(call, error: error)
        receipt.retry += rest.map { ($0.id, error) }
        receipt.failed += failed
    }

    /// Splits the call's items into those this failure leaves with no attempt (failed, with why)
    /// and the rest.
    private func lastAttempts(_ call: PlannedCall, error: String)
        -> (failed: [(id: String, reason: String)], rest: [RequestRecord])
    {
        let spent = call.requests.filter { $0.attempts + 1 >= maxAttempts }
        return (
            spent.map { ($0.id, "\(error); gave up after \(Plural.count($0.attempts + 1, "attempt"))") },
            call.requests.filter { $0.attempts + 1 < maxAttempts }
        )
    }

    /// The run stops, resumable; its items keep their attempts for faults of their own.
    static func stop(for verdict: FailureStreak.Verdict, error: ProviderError, calls: Int) -> RunStop {
        switch verdict {
        case .configuration:
            return RunStop(
                state: .interrupted,
                reason: "the provider refused the last \(calls) calls alike, with different items: "
                    + "\(error.description); that is the configuration (model name, key, base URL), "
                    + "not the items: fix it and run again",
                status: .configuration)
        case .providerFailing:
            return RunStop(
                state: .interrupted,
                reason: "the provider failed the last \(calls) calls alike: \(error.description); "
                    + "it is failing, not the items, which wait for the next run",
                status: .unavailable)
        }
    }
}
