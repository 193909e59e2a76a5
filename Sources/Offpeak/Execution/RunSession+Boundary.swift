import Foundation
import Logging

/// What is checked between two calls (DESIGN.md, "How long work survives being stopped"): a stop
/// request, the time left in the window, and the job's conditions. A call starts only if all hold;
/// otherwise the run stops here, with everything before it committed.
extension RunSession {
    mutating func boundary(before call: PlannedCall) throws(OffpeakError) -> Stop? {
        if let stop = options.stop, stop.isRequested {
            return Stop(
                state: .interrupted, reason: "stopped by \(stop.reason ?? "a signal")",
                status: .temporaryFailure)
        }
        if let end = options.windowEnd, let stop = try windowStop(call, end: end) { return stop }
        guard let gate = options.gate else { return nil }
        let conditions = gate.read()
        var failing = ConditionGate.failing(
            spec.constraints, conditions, needsNetwork: !ConditionGate.isLocal(runner.provider.baseURL))
        // `--force` runs past the job's constraints, not past a missing network.
        if options.force { failing.removeAll { $0 != .offline } }
        guard !failing.isEmpty else { return nil }
        return Stop(
            state: .waiting, reason: failing.sentence, status: .temporaryFailure, deferred: failing)
    }

    /// A call starts only if its expected duration (measured per model, see `LatencyEstimate`)
    /// fits the time left; the first call of a pass starts anyway (unless the tick already made
    /// one), so every tick makes progress.
    private mutating func windowStop(_ call: PlannedCall, end: Date) throws(OffpeakError) -> Stop? {
        let left = end.timeIntervalSinceNow
        guard callsMade > 0 || !options.firstCallAlwaysStarts || left <= 0 else { return nil }
        let input = TokenEstimator.inputTokens(call.request)
        let expected = try runner.store.latency(model: call.request.model)?.seconds(
            input: input, maxOutput: call.request.maxTokens)
        guard left <= 0 || (expected.map { $0 > left } ?? false) else { return nil }
        let need = expected.map { String(format: "%.1f s", $0) } ?? "unknown"
        return Stop(
            state: .interrupted,
            reason:
                "window ends in \(String(format: "%.1f", max(0, left))) s; the next call needs about \(need)",
            status: .temporaryFailure)
    }
}
