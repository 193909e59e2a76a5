/// The shortest prompt prefix each Claude model caches, so `cache_control` is sent only where it
/// pays.
///
/// Anthropic caches a marked prefix only when it is at least the model's minimum cacheable length;
/// a shorter one is billed as plain input, so marking it saves nothing. Marking is not free
/// elsewhere either: Anthropic-compatible proxies in front of other models (LiteLLM in front of
/// llama.cpp) reject a system prompt given as blocks, answering 500 to every call. So a model whose
/// name is not a Claude model is never marked.
///
/// The minimums are Anthropic's documented ones ("Prompt caching", minimum cacheable prompt
/// length). `offpeak-sim` bills with the same table (`OffpeakSimKit.ClaudeCacheMinimum`).
enum PromptCacheMinimum {
    /// Model families (names with dots spelled as dashes) and their minimum cacheable prefix, in
    /// tokens. A family matches a model name equal to it or going on with anything but another
    /// version number (a date, `-latest`, Vertex's `@date`), so `claude-opus-4` takes
    /// `claude-opus-4-20250514` but not `claude-opus-4-7`.
    static let families: [(family: String, tokens: Int)] = [
        ("claude-opus-4-6", 4096), ("claude-opus-4-5", 4096), ("claude-haiku-4-5", 4096),
        ("claude-opus-4-1", 1024), ("claude-opus-4", 1024), ("claude-sonnet-4-6", 1024),
        ("claude-sonnet-4-5", 1024), ("claude-sonnet-4", 1024), ("claude-3-7-sonnet", 1024),
        ("claude-3-5-sonnet", 1024), ("claude-3-opus", 1024),
        ("claude-3-5-haiku", 2048), ("claude-3-haiku", 2048),
    ].sorted { $0.family.count > $1.family.count }

    /// The minimum of a Claude model not in the table (a newer one): the most common minimum.
    /// Marking a prefix the model will not cache costs nothing on Anthropic's API, while a newer
    /// model with a lower minimum only misses the saving on prefixes between the two.
    static let unlistedClaude = 1024

    /// The minimum cacheable prefix of `model`, in tokens, or nil when it is not a Claude model
    /// (nothing is ever marked for it).
    ///
    /// A provider's spelling is accepted around the name: Bedrock's `anthropic.claude-...-v1:0`,
    /// Vertex's `claude-...@date`, LiteLLM's `anthropic/claude-sonnet-4.5`.
    static func tokens(for model: String) -> Int? {
        let lowered = model.lowercased()
        guard let start = lowered.range(of: "claude") else { return nil }
        let name = lowered[start.lowerBound...].replacingOccurrences(of: ".", with: "-")
        for (family, tokens) in families where name.hasPrefix(family) {
            if !continuesVersion(name.dropFirst(family.count)) { return tokens }
        }
        return unlistedClaude
    }

    /// Whether what follows a family name makes it a newer model: another digit, or a dash and a
    /// one- or two-digit version number (`-7`, `-10-...`); a dated snapshot's `-20250514` is not.
    private static func continuesVersion(_ rest: Substring) -> Bool {
        if rest.first?.isNumber == true { return true }
        guard rest.first == "-" else { return false }
        let digits = rest.dropFirst().prefix { $0.isNumber }
        return (1...2).contains(digits.count)
    }

    /// The system prompt's tokens `provider` caches for `request` (read from the cache by every
    /// call after the first that sends it), or nil when it caches none
    /// (`ProviderCapabilities.PromptCache`).
    static func cachedPrefix(of request: CompletionRequest, provider: ProviderKind) -> Int? {
        guard let prefix = request.system else { return nil }
        let tokens = TokenEstimator.tokens(prefix)
        switch provider.capabilities.promptCache {
        case .marked:
            guard request.cacheSystemPrompt, pays(model: request.model, prefixTokens: tokens) else {
                return nil
            }
        case .automatic(let minimum):
            guard tokens >= minimum else { return nil }
        }
        return tokens
    }

    /// Whether a prefix of `prefixTokens` (`TokenEstimator` units) is worth marking for `model`.
    static func pays(model: String, prefixTokens: Int) -> Bool {
        guard let minimum = tokens(for: model) else { return false }
        return prefixTokens >= minimum
    }
}
