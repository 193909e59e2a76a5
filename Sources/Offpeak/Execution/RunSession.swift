import Foundation
import Logging

/// One process's pass over a run: sends its pending requests in order until they are done or
/// something stops it (a budget, the provider going away), then writes the outputs.
struct RunSession {
    let runner: JobRunner
    let spec: JobSpec
    var run: RunRecord
    let options: JobRunner.Options
    var answeredNow = 0
    /// Calls this pass has sent (the first may start whatever the window says).
    var callsMade = 0
    /// Conditions that did not hold when `run --force` started the run.
    var forcedPast: [ConditionGate.Reason] = []
    var unpricedModels: Set<String> = []
    /// What the user should read before the outcome (a changed spec's dropped items).
    var notices: [String] = []

    /// Why the pass ended early.
    struct Stop {
        var state: RunState
        var reason: String
        var status: ExitStatus
        /// The conditions that stopped it, for the deferred queue.
        var deferred: [ConditionGate.Reason] = []
    }

    init(runner: JobRunner, spec: JobSpec, run: RunRecord, options: JobRunner.Options) {
        self.runner = runner
        self.spec = spec
        self.run = run
        self.options = options
    }

    mutating func execute() throws(OffpeakError) -> RunOutcome {
        let store = runner.store
        var stop: Stop?
        // Each round plans the pending requests into calls; items a batched answer lost come back in
        // the next round in smaller batches, so every round makes progress and the loop ends.
        rounds: while stop == nil {
            let calls = try plan()
            if calls.isEmpty {
                if try advanceReductions() { continue }  // a long document's next steps
                break
            }
            for call in calls {
                stop = try send(call)
                run = try store.run(id: run.id) ?? run
                report()
                if stop != nil { break rounds }
            }
        }
        let writer = OutputWriter(directory: runner.workspace.url(for: spec.output))
        try writer.write(
            job: spec.name, runID: run.id, requests: try store.requests(runID: run.id),
            results: try store.results(runID: run.id))
        return try finish(stop)
    }

    /// The run's pending requests packed into calls; an unreadable stored request fails alone.
    private mutating func plan() throws(OffpeakError) -> [PlannedCall] {
        var pending: [(record: RequestRecord, request: CompletionRequest)] = []
        let now = Date()
        let due = try runner.store.requests(runID: run.id, states: [.pending, .retrying]).filter {
            $0.state == .pending || ($0.nextAttemptAt ?? now) <= now
        }
        for record in due {
            do {
                pending.append((record, try record.completionRequest()))
            } catch {
                try runner.store.commitCall(
                    run: run, ledger: nil, results: [],
                    failed: [(record.id, "stored request unreadable: \(error)")])
            }
        }
        pending = try answerFromCache(pending)
        pending = try refuseOversized(pending)
        let model = pending.first?.request.model ?? run.model
        let price = runner.prices.price(for: model)
        let planner = BatchPlanner(
            batching: spec.batching, contextWindow: price?.maxInputTokens ?? 128_000,
            maxOutputTokens: price?.maxOutputTokens ?? 8192, outputWeight: price?.outputWeight ?? 5)
        return planner.plan(pending)
    }

    /// Fails, unsent, the requests their model cannot take (`ModelLimits`), and returns the rest.
    private func refuseOversized(_ pending: [(record: RequestRecord, request: CompletionRequest)])
        throws(OffpeakError) -> [(record: RequestRecord, request: CompletionRequest)]
    {
        var refused: [(id: String, reason: String)] = []
        var rest: [(record: RequestRecord, request: CompletionRequest)] = []
        for entry in pending {
            let limits = ModelLimits(
                model: entry.request.model, price: runner.prices.price(for: entry.request.model))
            if let why = limits.refusal(of: entry.request) {
                refused.append((entry.record.id, why))
            } else {
                rest.append(entry)
            }
        }
        if !refused.isEmpty {
            try runner.store.commitCall(
                run: run, ledger: nil, results: [], failed: refused, lease: runner.lease)
        }
        return rest
    }

    private func report() {
        guard let progress = options.progress else { return }
        let dollars = (try? runner.store.spend(runID: run.id).dollars) ?? 0
        progress(
            RunProgress(
                job: spec.name, done: run.itemsDone, failed: run.itemsFailed, total: run.itemsTotal,
                dollars: dollars))
    }

    /// Moves the run to where this pass left it and says so.
    private mutating func finish(_ stop: Stop?) throws(OffpeakError) -> RunOutcome {
        run = try runner.store.run(id: run.id) ?? run  // counters as committed, before the state moves
        let spend = try runner.store.spend(runID: run.id)
        let status: ExitStatus
        let counts =
            "\(run.itemsDone) of \(Plural.count(run.itemsTotal, "item")) answered (\(answeredNow) now)"
        var message: String
        let waiting = try runner.store.requests(runID: run.id, states: [.waiting])
        let retrying = try runner.store.requests(runID: run.id, states: [.retrying])
        if let stop {
            try runner.move(&run, to: stop.state, reason: stop.reason)
            status = stop.status
            if stop.deferred.isEmpty {
                message = "job \(spec.name): \(stop.reason); \(counts)"
            } else {
                try runner.store.deferJob(spec.name, run: run, reasons: stop.reason, at: Date())
                message =
                    "job \(spec.name) deferred part-way (\(stop.reason)); \(counts); `offpeak tick` goes on once they hold"
            }
            if stop.state == .interrupted { message += "; run it again to do the rest" }
        } else if let next = retrying.min(by: {
            ($0.nextAttemptAt ?? .distantPast) < ($1.nextAttemptAt ?? .distantPast)
        }) {
            let why = "\(Plural.count(retrying.count, "item")) retrying; next \(next.error ?? "soon")"
            try runner.move(&run, to: .interrupted, reason: why)
            status = .temporaryFailure
            message = "job \(spec.name): \(counts); \(why)"
        } else if let first = waiting.first {
            // Items whose sources cannot be fetched yet wait for a later run; the rest is done.
            let why =
                "\(Plural.count(waiting.count, "item")) \(waiting.count == 1 ? "waits" : "wait"): "
                + (first.error ?? "not ready")
            try runner.move(&run, to: .waiting, reason: why)
            status = .temporaryFailure
            message = "job \(spec.name): \(counts); \(why); run it again once they can be fetched"
        } else if run.itemsFailed > 0 {
            let firstError =
                try runner.store.requests(runID: run.id, states: [.failed]).first?.error ?? "unknown"
            try runner.move(
                &run, to: .failed,
                reason: "\(Plural.count(run.itemsFailed, "item")) failed; first: \(firstError)")
            status = .unavailable
            message = "job \(spec.name): \(counts), \(run.itemsFailed) failed (first: \(firstError))"
        } else {
            try runner.move(&run, to: .completed, reason: nil)
            status = .ok
            message = "job \(spec.name): \(counts)"
        }
        if !forcedPast.isEmpty { message = "forced past: \(forcedPast.sentence) (--force); " + message }
        for notice in notices.reversed() { message = notice + "; " + message }
        return RunOutcome(
            run: run, status: status, message: message, spend: spend, outputDirectory: spec.output,
            answeredNow: answeredNow, callsMade: callsMade, deferred: stop?.deferred ?? [])
    }
}
