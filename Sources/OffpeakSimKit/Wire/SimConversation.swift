/// A request reduced to what the sim answers and bills, whichever API it came through.
public struct SimConversation: Sendable, Equatable {
    /// One system text block; `cacheMarked` when it carries Anthropic's `cache_control`,
    /// `cacheHour` when that asks for the 1-hour TTL.
    public struct SystemBlock: Sendable, Equatable {
        public var text: String
        public var cacheMarked: Bool
        public var cacheHour: Bool

        public init(text: String, cacheMarked: Bool = false, cacheHour: Bool = false) {
            self.text = text
            self.cacheMarked = cacheMarked
            self.cacheHour = cacheHour
        }
    }

    /// One message; its content as text blocks (a plain string content is one block).
    public struct Message: Sendable, Equatable {
        public var role: String
        public var texts: [String]

        public init(role: String, texts: [String]) {
            self.role = role
            self.texts = texts
        }
    }

    public var system: [SystemBlock]
    public var messages: [Message]
    /// The request's tool definitions as JSON, and the input tokens they bill with the provider's
    /// tool-use system prompt (Anthropic; 0 without tools).
    public var tools: String = ""
    public var toolTokens = 0
    /// How long the provider keeps the prefix where the call asked (OpenAI's
    /// `prompt_cache_retention: 24h`); nil: the cache's own TTL.
    public var retention: Duration?

    public init(system: [SystemBlock] = [], messages: [Message]) {
        self.system = system
        self.messages = messages
    }

    /// Input tokens: every system and message text block counted with `SimTokens` and summed,
    /// with no per-message overhead, so a one-block request matches offpeak's own estimate.
    public var inputTokens: Int {
        toolTokens + system.reduce(0) { $0 + SimTokens.count($1.text) }
            + messages.reduce(0) { sum, message in message.texts.reduce(sum) { $0 + SimTokens.count($1) } }
    }

    /// The text the answer is derived from: the last user message's blocks, one per line.
    public var lastUserText: String {
        messages.last(where: { $0.role == "user" })?.texts.joined(separator: "\n") ?? ""
    }

    /// Anthropic's cacheable prefix: the tools, which come first, and the system blocks through
    /// the last one with `cache_control`.
    public var markedSystemPrefix: CacheablePrefix? {
        guard let last = system.lastIndex(where: \.cacheMarked) else { return nil }
        var blocks = Self.prefix(of: system[...last])
        blocks.retention = system[last].cacheHour ? PromptCacheBook.hourTTL : nil
        guard toolTokens > 0 else { return blocks }
        return CacheablePrefix(
            text: tools + "\u{1F}" + blocks.text, tokens: toolTokens + blocks.tokens,
            retention: blocks.retention)
    }

    /// OpenAI's cacheable prefix: all system (and developer) text, cached automatically.
    public var systemPrefix: CacheablePrefix? {
        guard !system.isEmpty else { return nil }
        var prefix = Self.prefix(of: system[...])
        prefix.retention = retention
        return prefix
    }

    private static func prefix(of blocks: ArraySlice<SystemBlock>) -> CacheablePrefix {
        CacheablePrefix(
            text: blocks.map(\.text).joined(separator: "\u{1F}"),
            tokens: blocks.reduce(0) { $0 + SimTokens.count($1.text) })
    }
}
