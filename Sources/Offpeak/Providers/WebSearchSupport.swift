/// How a provider's calls search the web (`search:` on a research job, `WebSearch`), declared in
/// its capabilities (`ProviderCapabilities.webSearch`; nil: it cannot). A run asks this, never the
/// provider's kind, whether its model can search before anything is stored or sent.
enum WebSearchSupport: Sendable, Equatable {
    /// A server tool any model takes, run at most `max_uses` times a call (Anthropic's
    /// `web_search`, and offpeak-sim's in its shape).
    case cappedTool
    /// Grounding with Google Search (Gemini's `googleSearch` tool), on any model.
    case grounding
    /// Chat completions' `web_search_options`, which only a search model takes: one whose name
    /// has `-search` (`gpt-4o-search-preview`, `gpt-5-search-api`); another model answers 400.
    /// A search model answers 400 to `temperature` and `top_p` too ("Model incompatible request
    /// argument supplied"), so they are left out of its calls.
    /// - Parameters:
    ///   - api: how the user knows the API, in a refusal (`OpenAI's chat completions`).
    ///   - examples: search models named to the user, the first suggested.
    case searchModels(api: String, examples: [String])

    /// Whether a call to `model` can search the web.
    func searches(with model: String) -> Bool {
        switch self {
        case .cappedTool, .grounding: true
        case .searchModels: Self.isSearchModel(model)
        }
    }

    /// Whether calls to `model` leave out `temperature` and `top_p`, which it refuses.
    func takesNoSampling(_ model: String) -> Bool {
        switch self {
        case .cappedTool, .grounding: false
        case .searchModels: Self.isSearchModel(model)
        }
    }

    /// Why `model` cannot search, for a refusal: `OpenAI's chat completions search only with a
    /// search model (…), not gpt-4.1`; nil when it can.
    func whyNot(_ model: String) -> String? {
        guard !searches(with: model), case .searchModels(let api, let examples) = self else { return nil }
        return "\(api) search only with a search model (\(examples.joined(separator: ", "))), not \(model)"
    }

    /// A model the user could name instead of one that cannot search.
    var suggestedModel: String? {
        guard case .searchModels(_, let examples) = self else { return nil }
        return examples.first
    }

    /// A search model's name has `-search` (`openai/gpt-4o-mini-search-preview` read as its last part).
    static func isSearchModel(_ model: String) -> Bool {
        let name = model.split(separator: "/").last.map(String.init) ?? model
        return name.contains("-search")
    }
}
