import Foundation

/// One item's request, ready to send: what the planner hands the executor.
public struct PlannedRequest: Sendable, Equatable {
    public var itemId: String
    public var position: Int
    public var request: CompletionRequest
    /// Identifies the answer: a hash of the provider and every field that changes it.
    public var cacheKey: String
}

/// Turns a job's items into requests: one per item, with the tier's model and the job's parameters.
public struct RequestPlanner: Sendable {
    public let provider: ProviderKind
    public let model: String

    public init(provider: ProviderKind, model: String) {
        self.provider = provider
        self.model = model
    }

    public func plan(_ spec: JobSpec) -> [PlannedRequest] {
        spec.items.enumerated().map { position, item in
            let request = self.request(spec, userMessage: spec.template.render(item.variables))
            return PlannedRequest(
                itemId: item.id, position: position, request: request,
                cacheKey: RequestPlanner.cacheKey(provider: provider, request: request))
        }
    }

    /// The request for one user message of `spec`: the system prompt and the shared instructions
    /// form the prefix every item of the job has in common, marked cacheable.
    public func request(_ spec: JobSpec, userMessage: String) -> CompletionRequest {
        let prefix = [spec.system, spec.instructions].compactMap { $0 }.filter { !$0.isEmpty }
        return CompletionRequest(
            model: model, system: prefix.isEmpty ? nil : prefix.joined(separator: "\n\n"),
            messages: [ChatMessage(role: .user, content: userMessage)], maxTokens: spec.maxTokens,
            temperature: spec.temperature, cacheSystemPrompt: spec.promptCache && !prefix.isEmpty)
    }

    /// SHA-256 of the provider and the request's canonical JSON (sorted keys): every field of
    /// `CompletionRequest` changes the answer, so every field is in the key.
    public static func cacheKey(provider: ProviderKind, request: CompletionRequest) -> String {
        SHA256.hex(provider.rawValue + "\n" + canonicalJSON(request))
    }

    static func canonicalJSON<T: Encodable>(_ value: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }
}
