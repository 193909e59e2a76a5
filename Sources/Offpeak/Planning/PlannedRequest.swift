import Foundation

/// One item's request, ready to send: what the planner hands the executor.
struct PlannedRequest: Sendable, Equatable {
    var itemId: String
    var position: Int
    var request: CompletionRequest
    /// Identifies the answer: a hash of the provider and every field that changes it.
    var cacheKey: String
    /// Why the item cannot be asked yet (a source not fetched yet) or at all (a source refused).
    var blocked: Blocked?
    /// The research sources its prompt holds, in order.
    var sources: [SourceCitation] = []

    enum Blocked: Sendable, Equatable {
        case waiting(String)
        case failed(String)
        /// Not to be asked, as the spec says (`robots: skip`).
        case skipped(String)
    }
}

/// Turns a job's items into requests: one per item, with the tier's model and the job's parameters.
public struct RequestPlanner: Sendable {
    let provider: ProviderKind
    let model: String

    init(provider: ProviderKind, model: String) {
        self.provider = provider
        self.model = model
    }

    /// One request per item. A long item (see `LongDocumentPlanner`) waits: its request is the
    /// whole document, replaced by the final reduce request once its parts are summarized.
    /// `sources` holds the fetched research context of the items that have
    /// sources: it fills `{{sources}}`, or goes before the user message when the template has none.
    func plan(_ spec: JobSpec, sources: [String: Result<SourceContext, OffpeakError>] = [:])
        -> [PlannedRequest]
    {
        let longDocuments = LongDocumentPlanner(spec: spec, planner: self)
        return spec.items.enumerated().map { position, item in
            var variables = item.variables
            var blocked: PlannedRequest.Blocked?
            var citations: [SourceCitation] = []
            switch sources[item.id] {
            case .success(.ready(let context, let cited)):
                variables[JobSpec.sourcesVariable] = context
                citations = cited
            case .success(.waiting(let why)): blocked = .waiting(why)
            case .success(.skipped(let why)): blocked = .skipped(why)
            case .failure(let error): blocked = .failed(error.description)
            case nil:
                if let parts = longDocuments.chunks(of: item)?.count {
                    blocked = .waiting("a long document: its \(parts) parts are summarized first")
                }
            }
            var message = spec.template.render(variables)
            if let context = variables[JobSpec.sourcesVariable],
                !spec.template.variables.contains(JobSpec.sourcesVariable)
            {
                message = context + "\n\n" + message
            }
            let search = spec.search(for: item)
            if let queries = search?.prompt(item.variables) { message += "\n\n" + queries }
            var request = self.request(spec, userMessage: message)
            request.searchUses = search?.maxUses
            return PlannedRequest(
                itemId: item.id, position: position, request: request,
                cacheKey: RequestPlanner.cacheKey(provider: provider, request: request), blocked: blocked,
                sources: citations)
        }
    }

    /// The request for one user message of `spec`: the system prompt and the shared instructions
    /// form the prefix every item of the job has in common, asked to be cached when the job's
    /// `prompt_cache` is on. Whether it is marked on the wire depends on the model and the
    /// prefix's length, and is decided where the body is built (`PromptCacheMinimum`).
    func request(_ spec: JobSpec, userMessage: String) -> CompletionRequest {
        let prefix = [spec.system, spec.instructions].compactMap { $0 }.filter { !$0.isEmpty }
        return CompletionRequest(
            model: model, system: prefix.isEmpty ? nil : prefix.joined(separator: "\n\n"),
            messages: [ChatMessage(role: .user, content: userMessage)], maxTokens: spec.maxTokens,
            temperature: spec.temperature, cacheSystemPrompt: spec.promptCache && !prefix.isEmpty)
    }

    /// SHA-256 of the provider and the request's canonical JSON (sorted keys): model, system,
    /// messages, max_tokens, temperature, top_p and stop all change the answer, so all are in the
    /// key (a cache that left one out served wrong answers); only the prefix-cache marker is not.
    public static func cacheKey(provider: ProviderKind, request: CompletionRequest) -> String {
        // Where the provider caches the prefix does not change the answer.
        key(provider: provider, json: request.canonicalJSON(cacheSystemPrompt: false) ?? [])
    }

    /// The key of a request whose canonical JSON (prefix-cache marker off) is `json`.
    private static func key(provider: ProviderKind, json: [UInt8]) -> String {
        var running = SHA256.Running()
        running.update(keyPrefix(provider))
        running.update(json)
        return running.hex()
    }

    /// What a key hashes before the request's JSON: the provider's name and a newline.
    static func keyPrefix(_ provider: ProviderKind) -> String { provider.rawValue + "\n" }

    /// The request's payload (its canonical JSON, as stored) and its cache key, encoding it once
    /// when the two texts are the same (no prefix-cache marker).
    static func payloadAndKey(provider: ProviderKind, request: CompletionRequest) -> (
        payload: String, cacheKey: String
    ) {
        guard !request.cacheSystemPrompt else {
            return (request.canonicalText, cacheKey(provider: provider, request: request))
        }
        let json = request.canonicalJSON ?? []
        return (String(decoding: json, as: UTF8.self), key(provider: provider, json: json))
    }
}
