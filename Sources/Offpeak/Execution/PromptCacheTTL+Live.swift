import Foundation

extension PromptCacheTTL {
    /// How long the provider keeps the cached prefix of `spec`'s live calls: as the job asks
    /// (`prompt_cache_ttl`); else an hour when its schedule runs it again more than five minutes and
    /// at most an hour after its next run, so each run reads the prefix the one before wrote instead
    /// of writing it again (at 1.25 times the input price each time); else the provider's default.
    /// A provider batch decides for itself (`forBatch`).
    static func forLive(_ spec: JobSpec, now: Date) -> PromptCacheTTL? {
        if let asked = spec.promptCacheTTL { return asked }
        guard let (cron, zone) = try? ScheduleBook.schedule(of: spec) else { return nil }
        let runs = cron.nextTimes(after: now, count: 2, in: zone)
        guard runs.count == 2 else { return nil }
        let gap = runs[1].timeIntervalSince(runs[0])
        return gap > 5 * 60 && gap <= 3600 ? .oneHour : nil
    }

    /// The hour for a live pass whose calls start more than five minutes apart: each is expected to
    /// take `callSeconds` (the model's measured speed; nil: not measured yet), `inFlight` at once,
    /// so one starts every `callSeconds / inFlight`, and a 5-minute prefix would be gone before the
    /// next call and written again (at 1.25 times the input price each time). Writing the hour costs
    /// more only once; a read costs the same under either.
    static func forPass(callSeconds: Double?, inFlight: Int) -> PromptCacheTTL? {
        guard let callSeconds, callSeconds / Double(max(1, inFlight)) > 5 * 60 else { return nil }
        return .oneHour
    }

    /// `forPass` for a call of `request` (`inputTokens` of input) at the model's measured speed
    /// (`latency`); nil for a request whose prefix is not cached.
    static func forPass(
        _ request: CompletionRequest, inputTokens: Int, latency: LatencyEstimate?, inFlight: Int
    ) -> PromptCacheTTL? {
        guard request.cacheSystemPrompt else { return nil }
        return forPass(
            callSeconds: latency?.expectedSeconds(input: inputTokens, maxOutput: request.maxTokens),
            inFlight: inFlight)
    }
}
