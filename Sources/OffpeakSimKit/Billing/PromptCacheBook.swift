import Synchronization

/// Remembers which prompt prefixes each API has cached, to bill them as the providers do.
///
/// Anthropic caches only what `cache_control` marks: the first request with a (model, prefix)
/// pays `cache_creation_input_tokens`, later ones within the TTL pay `cache_read_input_tokens`.
/// OpenAI caches on its own: a (model, system text) seen within the TTL (a day where the call asks
/// for extended retention, `CacheablePrefix.retention`) is reported as
/// `cached_tokens`. Either way a prefix shorter than the model's minimum (`minimum(api:model:)`)
/// is never cached, and every use refreshes the entry's TTL.
public final class PromptCacheBook: Sendable {
    public enum API: Sendable {
        case anthropic
        case openAI
        /// Gemini's implicit caching: as OpenAI's, automatic from a minimum, no write charge.
        case gemini
        /// DeepSeek's context caching on disk: automatic, in units of 64 tokens, no write charge.
        case deepSeek
    }

    private struct Key: Hashable {
        var api: API
        var model: String
        var prefix: String
    }

    /// The minimum for OpenAI (its automatic 1,024 rule) and for Anthropic-endpoint models not in
    /// Anthropic's table (`ClaudeCacheMinimum`): `--cache-min-tokens`.
    public let minTokens: Int
    public let ttl: Duration
    private let expiries: Mutex<[Key: ContinuousClock.Instant]>

    public init(minTokens: Int = 1024, ttl: Duration = .seconds(300)) {
        self.minTokens = minTokens
        self.ttl = ttl
        self.expiries = Mutex([:])
    }

    /// The shortest prefix `model` caches on `api`: Anthropic's documented per-model minimum for
    /// a Claude model it lists (Haiku 4.5 caches nothing under 4,096 tokens), else `minTokens`.
    public func minimum(api: API, model: String) -> Int {
        switch api {
        case .anthropic: ClaudeCacheMinimum.tokens(for: model) ?? minTokens
        case .openAI, .gemini: minTokens
        case .deepSeek: min(minTokens, 64)
        }
    }

    /// Splits a request's input tokens into uncached, cache-written and cache-read parts.
    /// - Parameters:
    ///   - inputTokens: every input token of the request, the prefix included.
    ///   - prefix: the cacheable prefix (Anthropic: through the last `cache_control` block;
    ///     OpenAI: the system and developer text), or nil when there is none.
    ///   - now: the time of the request; tests pass their own clock readings.
    public func bill(
        api: API, model: String, inputTokens: Int, prefix: CacheablePrefix?,
        now: ContinuousClock.Instant = .now
    ) -> InputBilling {
        guard let prefix, prefix.tokens >= minimum(api: api, model: model), prefix.tokens <= inputTokens
        else {
            return InputBilling(uncached: inputTokens)
        }
        let hit = touch(
            Key(api: api, model: model, prefix: prefix.text), now: now,
            ttl: prefix.retention ?? ttl)
        let rest = inputTokens - prefix.tokens
        switch (api, hit) {
        case (.anthropic, true): return InputBilling(uncached: rest, cacheRead: prefix.tokens)
        case (.anthropic, false):
            return InputBilling(
                uncached: rest, cacheCreation: prefix.tokens,
                cacheCreationHour: prefix.hour ? prefix.tokens : 0)
        case (.openAI, true), (.gemini, true): return InputBilling(uncached: rest, cacheRead: prefix.tokens)
        case (.openAI, false), (.gemini, false), (.deepSeek, false):
            return InputBilling(uncached: inputTokens)
        case (.deepSeek, true):
            // Its disk cache holds whole units of 64 tokens: the rest of the prefix is a miss.
            let read = prefix.tokens / 64 * 64
            return InputBilling(uncached: inputTokens - read, cacheRead: read)
        }
    }

    /// The input tokens `bill` would report as cache reads, without using the cache (no entry is
    /// written or refreshed), so the rate limiter can count a call before it is answered.
    public func wouldRead(
        api: API, model: String, inputTokens: Int, prefix: CacheablePrefix?,
        now: ContinuousClock.Instant = .now
    ) -> Int {
        guard let prefix, prefix.tokens >= minimum(api: api, model: model), prefix.tokens <= inputTokens
        else { return 0 }
        let key = Key(api: api, model: model, prefix: prefix.text)
        let hit = expiries.withLock { expiries in expiries[key].map { now < $0 } ?? false }
        guard hit else { return 0 }
        return api == .deepSeek ? prefix.tokens / 64 * 64 : prefix.tokens
    }

    /// Forgets every cached prefix.
    public func reset() {
        expiries.withLock { $0.removeAll() }
    }

    /// Anthropic's longer TTL, which a prefix marked `ttl: 1h` asks for.
    public static let hourTTL: Duration = .seconds(3600)

    /// Records a use of `key` for `ttl` and says whether it was still cached; drops expired
    /// entries. An entry's life only grows: a 5-minute use of an hour's entry leaves it the hour.
    private func touch(_ key: Key, now: ContinuousClock.Instant, ttl: Duration) -> Bool {
        expiries.withLock { expiries in
            let hit = expiries[key].map { now < $0 } ?? false
            expiries = expiries.filter { now < $0.value }
            let until = now.advanced(by: ttl)
            expiries[key] = hit ? max(expiries[key] ?? until, until) : until
            return hit
        }
    }
}
