import Foundation

/// How one call goes to its provider, and so what it is billed: `live`, at the live prices; `flex`,
/// a live call the provider answers when it has room (OpenAI's `service_tier: "flex"`), slower and
/// sometimes refused, at the batch prices; `batch`, inside a provider batch, answered within a day,
/// at the batch prices.
enum CallLane: String, Sendable, Codable, CaseIterable {
    case live, flex, batch

    /// The lane a live or flex call is billed in: the tier its provider says answered it (OpenAI's
    /// `service_tier` in the response: `flex`, or `default` at the live prices), whatever was
    /// asked; the lane asked for when the provider names none, or one the price table has no
    /// prices for (`scale`, `priority`). A provider batch's requests are billed as a batch.
    func billed(asReported tier: String?) -> CallLane {
        guard self != .batch else { return self }
        switch tier {
        case "flex": return .flex
        case "default": return .live
        default: return self
        }
    }
}

/// What a provider's flex processing (`CallLane.flex`) is, declared in its capabilities.
struct FlexProcessing: Sendable, Equatable {
    /// The models that take it, by name prefix (`gpt-5` takes in `gpt-5-mini`); a model the price
    /// table gives flex prices takes it too.
    var models: [String]
    /// How long a flex call may take before it is abandoned: the provider's guide advises raising
    /// the client's timeout to this (OpenAI: 15 minutes), as flex requests queue for capacity.
    var timeout: TimeInterval

    /// Whether `model` (`openai/gpt-5-mini` read as `gpt-5-mini`) takes flex processing.
    func takes(_ model: String) -> Bool {
        let name = model.split(separator: "/").last.map(String.init) ?? model
        return models.contains { name.hasPrefix($0) }
    }

    /// Whether a failure is the provider refusing a flex call for want of capacity (OpenAI's 429
    /// "Resource Unavailable", not billed): the call is tried again later, or live.
    static func isCapacityRefusal(_ error: any Error) -> Bool {
        guard case .http(429, let message, _) = error as? ProviderError else { return false }
        return isCapacityRefusal(errorCode: nil, message: message)
    }

    /// The same, from an error body's code and message.
    static func isCapacityRefusal(errorCode: String?, message: String) -> Bool {
        if errorCode == "resource_unavailable" { return true }
        let text = message.lowercased()
        return text.contains("resource unavailable") || text.contains("resource_unavailable")
    }
}
