import Foundation
import Testing

@testable import Offpeak

/// Issue 24, item 4, on the wire and in the spec: the search tool asked as each API takes it, the
/// searches and citations read back from answers in the providers' shapes, searches priced from
/// LiteLLM's `search_context_cost_per_query`, and `search:` parsed and checked.
struct WebSearchTests {
    static func request(searchUses: Int?) -> CompletionRequest {
        var request = CompletionRequest(
            model: "claude-sonnet-4-5", messages: [ChatMessage(role: .user, content: "News?")], maxTokens: 200
        )
        request.searchUses = searchUses
        return request
    }

    static func json(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func theAnthropicToolIsAskedWithItsCap() throws {
        let body = try Self.json(AnthropicProvider.requestBody(for: Self.request(searchUses: 4)))
        let tools = try #require(body["tools"] as? [[String: Any]])
        #expect(tools.count == 1)
        #expect(tools[0]["type"] as? String == "web_search_20250305")
        #expect(tools[0]["name"] as? String == "web_search")
        #expect(tools[0]["max_uses"] as? Int == 4)
        #expect(body["tool_choice"] == nil, "the model decides when to search")
        let plain = try Self.json(AnthropicProvider.requestBody(for: Self.request(searchUses: nil)))
        #expect(plain["tools"] == nil)
    }

    /// An answer in the shape Anthropic's documentation shows: the search, its results, and text
    /// blocks citing some of them.
    @Test func anAnthropicAnswerGivesItsSearchesAndCitations() throws {
        let answer = """
            {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
             "content": [
               {"type": "text", "text": "I'll search."},
               {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
                "input": {"query": "claude shannon birth date"}},
               {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": [
                 {"type": "web_search_result", "url": "https://en.wikipedia.org/wiki/Claude_Shannon",
                  "title": "Claude Shannon - Wikipedia", "encrypted_content": "EqgfCioIARgBIiQ3YTAw",
                  "page_age": "April 30, 2025"},
                 {"type": "web_search_result", "url": "https://example.org/shannon", "title": "Shannon",
                  "encrypted_content": "abc"}]},
               {"type": "text", "text": "Claude Shannon was born on April 30, 1916.", "citations": [
                 {"type": "web_search_result_location", "url": "https://en.wikipedia.org/wiki/Claude_Shannon",
                  "title": "Claude Shannon - Wikipedia", "encrypted_index": "Eo8BCioIAhgBIiQyYjQ0",
                  "cited_text": "Claude Elwood Shannon (April 30, 1916 – February 24, 2001)"}]},
               {"type": "text", "text": " Again.", "citations": [
                 {"type": "web_search_result_location", "url": "https://en.wikipedia.org/wiki/Claude_Shannon",
                  "title": "Claude Shannon - Wikipedia", "encrypted_index": "x", "cited_text": "y"}]}],
             "stop_reason": "end_turn",
             "usage": {"input_tokens": 6039, "output_tokens": 931, "server_tool_use": {"web_search_requests": 1}}}
            """
        let response = try AnthropicProvider.parseResponse(
            Data(answer.utf8), for: Self.request(searchUses: 3), redactor: .shapes)
        #expect(response.text == "I'll search.Claude Shannon was born on April 30, 1916. Again.")
        #expect(response.finishReason == .stop)
        #expect(response.usage == Usage(input: 6039, output: 931, searches: 1))
        #expect(
            response.citations == [
                SearchCitation(
                    url: "https://en.wikipedia.org/wiki/Claude_Shannon", title: "Claude Shannon - Wikipedia",
                    query: "claude shannon birth date")
            ])
    }

    @Test func anAnthropicAnswerWithoutACountIsBilledForTheSearchesItShows() throws {
        let answer = """
            {"content": [
               {"type": "server_tool_use", "id": "a", "name": "web_search", "input": {"query": "q1"}},
               {"type": "server_tool_use", "id": "b", "name": "web_search", "input": {"query": "q2"}},
               {"type": "web_search_tool_result", "tool_use_id": "b",
                "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}},
               {"type": "text", "text": "Done."}],
             "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 2}}
            """
        let response = try AnthropicProvider.parseResponse(
            Data(answer.utf8), for: Self.request(searchUses: 3), redactor: .shapes)
        #expect(response.usage.searches == 2)
        #expect(response.citations.isEmpty)
    }

    @Test func openAISearchesWithWebSearchOptionsAndCitesItsAnnotations() throws {
        var request = Self.request(searchUses: 2)
        request.model = "gpt-4o-search-preview"
        let body = try Self.json(OpenAIProvider.requestBody(for: request))
        #expect((body["web_search_options"] as? [String: Any])?.isEmpty == true)
        #expect(
            try Self.json(OpenAIProvider.requestBody(for: Self.request(searchUses: nil)))[
                "web_search_options"] == nil)
        let answer = """
            {"id": "chatcmpl-1", "model": "gpt-4o-search-preview", "choices": [{"index": 0,
              "message": {"role": "assistant", "content": "It rained.", "annotations": [
                {"type": "url_citation", "url_citation": {"start_index": 0, "end_index": 10,
                 "url": "https://weather.example/today", "title": "Today"}}]},
              "finish_reason": "stop"}],
             "usage": {"prompt_tokens": 12, "completion_tokens": 3}}
            """
        let response = try OpenAIProvider.parseResponse(Data(answer.utf8), for: request, redactor: .shapes)
        #expect(response.usage.searches == 1, "OpenAI bills a search model's call as one search")
        #expect(response.citations == [SearchCitation(url: "https://weather.example/today", title: "Today")])
    }

    @Test func aCitationIsRedactedLikeTheAnswer() {
        let secret = "sk-ant-api03-" + String(repeating: "a", count: 90)
        var response = CompletionResponse(text: "x", finishReason: .stop, usage: Usage(), model: "m")
        response.citations = [
            SearchCitation(url: "https://e.org/?key=\(secret)", title: secret, query: secret)
        ]
        let redacted = response.redacted(by: Redactor(secrets: [secret]))
        #expect(!CanonicalJSON.text(redacted.citations).contains(secret))
    }

    @Test func searchesArePricedPerSearchWithNoBatchDiscount() throws {
        let table = try PriceTable.decode(
            Data(
                #"{"m": {"input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06, "search_context_cost_per_query": {"search_context_size_low": 0.005, "search_context_size_medium": 0.01, "search_context_size_high": 0.02}}}"#
                    .utf8), source: "prices.json")
        let price = try #require(table.cost(of: "m"))
        #expect(price.perSearch == 0.01, "offpeak asks for the default (medium) context size")
        let usage = Usage(input: 1000, output: 500, searches: 3)
        #expect(abs(price.dollars(for: usage, lane: .live) - (0.001 + 0.001 + 0.03)) < 1e-12)
        #expect(abs(price.dollars(for: usage, lane: .batch) - (0.0005 + 0.0005 + 0.03)) < 1e-12)
        #expect(abs(price.naiveDollars(for: usage) - 0.032) < 1e-12, "a search costs the same either way")
        #expect(PriceTable.bundled.cost(of: "claude-haiku-4-5")?.perSearch == 0.01)
        #expect(PriceTable.bundled.cost(of: "gpt-4o-mini")?.perSearch == nil)
    }

    @Test func aRequestWithoutSearchKeepsItsCacheKey() throws {
        let plain = Self.request(searchUses: nil)
        #expect(!plain.canonicalText.contains("searchUses"))
        let searching = Self.request(searchUses: 2)
        #expect(searching.canonicalText == CanonicalJSON.text(searching))
        #expect(
            RequestPlanner.cacheKey(provider: .sim, request: plain)
                != RequestPlanner.cacheKey(provider: .sim, request: searching))
    }

    static func parse(_ yaml: String) throws -> JobSpec {
        try JobSpecParser.parse(yaml: yaml, path: "jobs/r.yaml", workspace: URL(fileURLWithPath: "/tmp"))
    }

    static func error(_ yaml: String) -> String {
        do {
            _ = try parse(yaml)
            return "parsed"
        } catch {
            return "\(error)"
        }
    }

    @Test func searchIsParsedOnAJobAndAnItem() throws {
        let spec = try Self.parse(
            """
            kind: research
            template: "{{item}}"
            items:
              - a
              - {id: b, item: B, search: {max_uses: 1}}
            search: {queries: ["{{item}} news", "{{id}} docs"]}
            """)
        #expect(spec.search?.maxUses == JobSpec.Search.defaultMaxUses)
        #expect(spec.search?.prompt(["item": "A", "id": "1"]) == "Search the web for:\n- A news\n- 1 docs")
        #expect(spec.items[1].search == JobSpec.Search(queries: [], maxUses: 1))
        #expect(spec.search(for: spec.items[0]) == spec.search)
        #expect(spec.items[1].search?.prompt(["item": "B"]) == nil, "no queries: the model chooses")
        #expect(spec.reuse == .ttl && !spec.reusesUnchanged, "an answer from the web changes with it")
        let plan = RequestPlanner(provider: .sim, model: "m").plan(spec)
        #expect(plan.map(\.request.searchUses) == [3, 1])
        #expect(plan[0].request.messages.first?.content == "a\n\nSearch the web for:\n- a news\n- 1 docs")
        #expect(plan[1].request.messages.first?.content == "B")
    }

    @Test func badSearchesAreRefusedWithTheirPlace() {
        #expect(
            Self.error("kind: prompt\ntemplate: '{{item}}'\nitems: [a]\nsearch: {max_uses: 2}\n")
                == "jobs/r.yaml:4:9: search: only a research job searches the web (this job is kind 'prompt')"
        )
        #expect(
            Self.error("kind: research\ntemplate: '{{item}}'\nitems: [a]\nsearch: {max_uses: 0}\n")
                == "jobs/r.yaml:4:20: search.max_uses: expected a whole number from 1 to 20, got '0'")
        #expect(
            Self.error("kind: research\ntemplate: '{{item}}'\nitems: [a]\nsearch: {querys: [x]}\n")
                .hasPrefix("jobs/r.yaml:4:10: search.querys: unknown field; did you mean 'queries'?"))
        #expect(
            Self.error("kind: research\ntemplate: '{{item}}'\nitems: [a]\nsearch: {queries: ['{{topic}}']}\n")
                == "jobs/r.yaml:3:9: items[1]: search query variable 'topic' is not supplied by this item")
        #expect(
            Self.error("kind: research\ntemplate: '{{item}}'\nitems: [a]\nsearch: {queries: ['']}\n")
                == "jobs/r.yaml:4:20: search.queries[1]: expected a search query, got an empty string")
        #expect(
            Self.error("kind: research\ntemplate: '{{item}}'\nitems: [a]\nreuse: unchanged\nsearch: {}\n")
                .hasPrefix("jobs/r.yaml:4:8: reuse: a job that searches the web cannot reuse answers"))
        #expect(
            Self.error("kind: research\ntemplate: '{{item}}'\nqueue: true\nsearch: {}\n")
                .hasPrefix(
                    "jobs/r.yaml:4:9: search: a job that takes submitted requests (queue: true) cannot"))
    }
}
