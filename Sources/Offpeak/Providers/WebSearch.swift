/// The provider's server-side web search (issue 24, item 4): the model runs the searches itself
/// during the call, at most `CompletionRequest.searchUses` of them, and the provider bills each.
///
/// - Anthropic: the `web_search_20250305` tool with `max_uses`; the answer carries
///   `server_tool_use` blocks (each search's query), `web_search_tool_result` blocks (the results)
///   and text blocks whose `citations` name the results they rest on; `usage.server_tool_use
///   .web_search_requests` counts the searches billed.
/// - OpenAI: chat completions' `web_search_options` (its search models); the answer's
///   `annotations` are `url_citation`s. Chat completions take no cap on searches and report no
///   count: OpenAI bills such a call as one search, and so does offpeak.
enum WebSearch {
    /// Anthropic's tool version offpeak asks for.
    static let anthropicToolType = "web_search_20250305"

    /// The tool entry of a Messages request that lets the model search at most `maxUses` times.
    static func anthropicTool(maxUses: Int) -> JSONValue {
        .object([
            "type": .string(anthropicToolType), "name": .string("web_search"), "max_uses": .int(maxUses),
        ])
    }

    /// The searches an answer that reported none is billed for: OpenAI's chat completions bill a
    /// search model's call as one search.
    static let searchesPerOpenAICall = 1
}

/// A search result an answer cited: where it is, its title, and the query that found it (nil
/// when the provider does not say, as OpenAI's annotations do not).
struct SearchCitation: Codable, Sendable, Equatable {
    var url: String
    var title: String?
    var query: String?

    /// The citation with what came from outside (all of it) passed through `redactor`.
    func redacted(by redactor: Redactor) -> SearchCitation {
        SearchCitation(
            url: redactor.redact(url), title: title.map(redactor.redact), query: query.map(redactor.redact))
    }

    /// Each URL once, in the order first cited: a text cites one result in many places.
    static func distinct(_ citations: [SearchCitation]) -> [SearchCitation] {
        var seen: Set<String> = []
        return citations.filter { seen.insert($0.url).inserted }
    }

    /// Citations as a result keeps them (`StoredJSONList`); nil for none.
    static func stored(_ citations: [SearchCitation]) -> String? { StoredJSONList.text(citations) }

    /// What `stored` wrote; none for nil or text that does not decode (written by another offpeak).
    static func decoded(_ text: String?) -> [SearchCitation] { StoredJSONList.decoded(text) }
}
