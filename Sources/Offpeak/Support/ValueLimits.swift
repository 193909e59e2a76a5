import Foundation

/// The largest durations, sizes and budgets a job spec or `offpeak.yaml` accepts.
///
/// Each is far beyond what anyone needs and well inside what offpeak can hold: every date derived
/// from a duration (`now + cache_ttl`, a run's `deadline_at`) is written to the store, which cannot
/// hold dates past the year 9999 (`deadline: 3000000d` once validated and then broke every command),
/// and budgets are added to what a run has spent, which must not overflow. They are checked where
/// the value is read (`YAMLNodeReader`), so every field that takes a duration or size gives one.
public enum ValueLimits {
    /// `cache_ttl`, `deadline`, `checkpoint_max_age`: ten years.
    static let longDuration: TimeInterval = 3650 * 86_400
    /// `window`: one pass of a job sends calls for a day at most.
    public static let window: TimeInterval = 86_400
    /// `--grace`: calls in flight may finish for an hour after a stop signal. Unbounded, a grace of
    /// 1e300 seconds passed validation and trapped (SIGILL in libswiftCore) in the signal handler
    /// that printed it as whole seconds.
    public static let grace: TimeInterval = 3_600
    /// `lease`: a day (a run whose process went silent waits that long at most for another host).
    static let lease: TimeInterval = 86_400
    /// `http.connect_timeout`, `http.timeout`: an hour.
    static let httpTimeout: TimeInterval = 3_600
    /// `cache.max_bytes`: 1 TiB.
    static let cacheBytes = 1 << 40
    /// `budget.max_input_tokens`, `budget.max_output_tokens`: a trillion tokens.
    static let tokens = 1_000_000_000_000
    /// `budget.max_calls`: a billion calls.
    static let calls = 1_000_000_000
    /// `budget.max_dollars`: a million dollars.
    static let dollars = 1_000_000.0
    /// `limits.<provider>.in_flight`: a thousand calls at once, each a connection and a thread.
    static let inFlight = 1_000
    /// `limits.<provider>.requests_per_minute`: a million; each call of the last minute is
    /// remembered to keep within it.
    static let requestsPerMinute = 1_000_000
    /// `limits.<provider>.tokens_per_minute`: a trillion tokens.
    static let tokensPerMinute = 1_000_000_000_000
    /// A line of `offpeak submit` or of a spool `.jsonl` file, and a spool file taken as one
    /// request: 32 MiB. That is more than any provider takes as one request (Anthropic's Messages
    /// API takes 32 MB, its whole body) and some eight times the text of the longest context window
    /// (a million tokens, about 4 MB), so no line that could be answered is refused; and a line of
    /// garbage costs no more memory than this before it is refused.
    static let lineBytes = 32 << 20
    /// `lineBytes` as messages name it.
    static let lineBytesText = "32 MiB"
    /// Entries one feed may have (`Feed.maxEntries`), and so `max_new`: real feeds carry tens; one
    /// listing a whole archive is refused rather than made into ten thousand items at once.
    static let feedEntries = 10_000
    /// `search.max_uses`: web searches one call may run.
    static let searchUses = 20
}
