/// The shortest prefix each Claude model caches, as Anthropic bills it: a `cache_control` prefix
/// shorter than its model's minimum is not cached, and is billed as plain input.
///
/// The minimums are Anthropic's documented ones ("Prompt caching", minimum cacheable prompt
/// length). offpeak decides what to mark with the same table (`Offpeak.PromptCacheMinimum`); the
/// sim keeps its own copy because it stands in for the API and shares no code with offpeak.
enum ClaudeCacheMinimum {
    /// Model families (dots spelled as dashes) and their minimum cacheable prefix, in tokens,
    /// longest name first.
    static let families: [(family: String, tokens: Int)] = [
        ("claude-opus-4-6", 4096), ("claude-opus-4-5", 4096), ("claude-haiku-4-5", 4096),
        ("claude-opus-4-1", 1024), ("claude-opus-4", 1024), ("claude-sonnet-4-6", 1024),
        ("claude-sonnet-4-5", 1024), ("claude-sonnet-4", 1024), ("claude-3-7-sonnet", 1024),
        ("claude-3-5-sonnet", 1024), ("claude-3-opus", 1024),
        ("claude-3-5-haiku", 2048), ("claude-3-haiku", 2048),
    ].sorted { $0.family.count > $1.family.count }

    /// The documented minimum of `model`, or nil for a model not in the table (a Claude model
    /// newer than it, or any other name): the sim's `--cache-min-tokens` applies to those.
    ///
    /// A family matches a name equal to it or going on with anything but another version number:
    /// `claude-opus-4` takes `claude-opus-4-20250514` but not `claude-opus-4-7`. Provider
    /// spellings around the name (`anthropic.claude-...-v1:0`, `claude-...@date`,
    /// `anthropic/claude-sonnet-4.5`) are accepted.
    static func tokens(for model: String) -> Int? {
        let lowered = model.lowercased()
        guard let start = lowered.range(of: "claude") else { return nil }
        let name = lowered[start.lowerBound...].replacingOccurrences(of: ".", with: "-")
        for (family, tokens) in families where name.hasPrefix(family) {
            let rest = name.dropFirst(family.count)
            let versionDigits = rest.first == "-" ? rest.dropFirst().prefix { $0.isNumber }.count : 0
            let newerModel = rest.first?.isNumber == true || (1...2).contains(versionDigits)
            if !newerModel { return tokens }
        }
        return nil
    }
}
