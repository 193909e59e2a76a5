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
            let request = CompletionRequest(
                model: model, system: spec.system,
                messages: [ChatMessage(role: .user, content: spec.template.render(item.variables))],
                maxTokens: spec.maxTokens, temperature: spec.temperature)
            return PlannedRequest(
                itemId: item.id, position: position, request: request,
                cacheKey: RequestPlanner.cacheKey(provider: provider, request: request))
        }
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
