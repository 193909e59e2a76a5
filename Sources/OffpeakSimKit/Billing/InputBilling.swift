/// How one request's input tokens split between the base rate and the prompt cache.
///
/// The three parts never overlap and always sum to the request's input tokens. The APIs report
/// them differently: Anthropic's `input_tokens` is `uncached` (its cache fields are beside it);
/// OpenAI's `prompt_tokens` is the total and `cached_tokens` (= `cacheRead`) is inside it.
public struct InputBilling: Sendable, Equatable {
    public var uncached: Int
    public var cacheCreation: Int
    public var cacheRead: Int

    public init(uncached: Int, cacheCreation: Int = 0, cacheRead: Int = 0) {
        self.uncached = uncached
        self.cacheCreation = cacheCreation
        self.cacheRead = cacheRead
    }

    public var total: Int { uncached + cacheCreation + cacheRead }
}

/// The part of a prompt a provider may cache: its text (the cache key, with the model) and size.
public struct CacheablePrefix: Sendable, Hashable {
    public var text: String
    public var tokens: Int

    public init(text: String, tokens: Int) {
        self.text = text
        self.tokens = tokens
    }
}
