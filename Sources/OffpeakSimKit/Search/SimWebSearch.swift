import Foundation

/// The sim's server-side web search: deterministic canned results for what a prompt asks to be
/// searched, so a client's handling of searches (their count, their bill, the citations of its
/// answer) can be checked without the web.
///
/// The queries are the lines starting with `- ` after a line `Search the web for:` in the last
/// user message (as offpeak writes a `search:` job's prompt); a prompt without that list searches
/// once, for its first line. At most `maxUses` run, as Anthropic's tool caps them.
struct SimWebSearch: Sendable, Equatable {
    /// Results each search returns.
    static let resultsPerSearch = 3
    /// Input tokens each result bills: the page text it brings into the conversation (its
    /// `encrypted_content`), billed as input, as Anthropic bills search results.
    static let tokensPerResult = 200
    /// Where the canned results live: a name that never resolves (RFC 2606's `.invalid`).
    static let host = "search.offpeak-sim.invalid"

    struct Result: Sendable, Equatable {
        var url: String
        var title: String
        var pageAge: String
    }

    struct Search: Sendable, Equatable {
        var query: String
        var results: [Result]
    }

    /// The searches a call with the web search tool runs.
    static func searches(for conversation: SimConversation, maxUses: Int?) -> [Search] {
        let queries = self.queries(in: conversation.lastUserText)
        return queries.prefix(maxUses ?? queries.count).map { query in
            Search(query: query, results: results(for: query))
        }
    }

    static func queries(in text: String) -> [String] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        if let start = lines.lastIndex(of: "Search the web for:") {
            let listed = lines[(start + 1)...].prefix { $0.hasPrefix("- ") }.map { String($0.dropFirst(2)) }
                .filter { !$0.isEmpty }
            if !listed.isEmpty { return listed }
        }
        let first = lines.first { !$0.isEmpty } ?? "offpeak"
        return [String(first.prefix(80))]
    }

    /// The same results for the same query, every time.
    static func results(for query: String) -> [Result] {
        let slug = self.slug(query)
        return (1...resultsPerSearch).map { rank in
            Result(
                url: "https://\(host)/\(slug)/\(rank)", title: "\(query) (result \(rank))",
                pageAge: "November \(rank), 2026")
        }
    }

    /// Lowercase letters and digits of `query`, words joined by `-`; `q` when none are left.
    static func slug(_ query: String) -> String {
        let words = query.lowercased().split { !($0.isASCII && ($0.isLetter || $0.isNumber)) }
        return words.isEmpty ? "q" : words.prefix(8).joined(separator: "-")
    }
}

/// The web search tool of an Anthropic request (`web_search_20250305` or a later version).
struct SimWebSearchTool: Sendable, Equatable {
    var maxUses: Int?

    static let versions: Set<String> = ["web_search_20250305", "web_search_20260209"]

    /// The request's web search tool; nil without one.
    /// - Throws: `SimAPIError` for a tool the Messages API would refuse.
    static func anthropic(in tools: [SimJSON]?) throws -> SimWebSearchTool? {
        guard let tool = tools?.first(where: { $0["type"]?.string?.hasPrefix("web_search") == true }),
            let type = tool["type"]?.string
        else { return nil }
        guard versions.contains(type) else {
            throw SimAPIError(.invalidRequest, "tools: unknown tool type '\(type)'")
        }
        guard tool["name"]?.string == "web_search" else {
            throw SimAPIError(.invalidRequest, "tools: a \(type) tool must be named 'web_search'")
        }
        let maxUses = tool["max_uses"]?.int
        if let maxUses, maxUses < 1 {
            throw SimAPIError(.invalidRequest, "tools.max_uses: must be at least 1, got \(maxUses)")
        }
        return SimWebSearchTool(maxUses: maxUses)
    }
}
