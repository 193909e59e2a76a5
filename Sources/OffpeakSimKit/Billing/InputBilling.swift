/// How one request's input tokens split between the base rate and the prompt cache.
///
/// The three parts never overlap and always sum to the request's input tokens. The APIs report
/// them differently: Anthropic's `input_tokens` is `uncached` (its cache fields are beside it);
/// OpenAI's `prompt_tokens` is the total and `cached_tokens` (= `cacheRead`) is inside it.
public struct InputBilling: Sendable, Equatable {
    public var uncached: Int
    public var cacheCreation: Int
    /// The part of `cacheCreation` written to Anthropic's 1-hour cache.
    public var cacheCreationHour: Int
    public var cacheRead: Int

    public init(uncached: Int, cacheCreation: Int = 0, cacheCreationHour: Int = 0, cacheRead: Int = 0) {
        self.uncached = uncached
        self.cacheCreation = cacheCreation
        self.cacheCreationHour = cacheCreationHour
        self.cacheRead = cacheRead
    }

    public var total: Int { uncached + cacheCreation + cacheRead }
}

/// The part of a prompt a provider may cache: its text (the cache key, with the model) and size.
public struct CacheablePrefix: Sendable, Hashable {
    public var text: String
    public var tokens: Int
    /// Kept this long where the call asked (Anthropic's `cache_control.ttl: 1h`, OpenAI's
    /// `prompt_cache_retention: 24h`); nil: the cache's own TTL.
    public var retention: Duration?
    /// Marked for Anthropic's 1-hour cache, not the default five minutes: billed apart.
    public var hour: Bool { retention == PromptCacheBook.hourTTL }

    public init(text: String, tokens: Int, retention: Duration? = nil) {
        self.text = text
        self.tokens = tokens
        self.retention = retention
    }
}
