import Foundation
import Logging

/// A provider offpeak can call, by the name `offpeak.yaml`, `--provider` and the store know it by
/// (`anthropic`, `openai`, `sim`, `gemini`), and what it registered with that name
/// (`ProviderRegistration`): what its API can do and how one is made.
///
/// Not an enum: the providers are the registry's (`ProviderRegistry`), so adding one is its own
/// folder and one registration, and nothing else in offpeak lists them. Two kinds are equal when
/// their names are.
public struct ProviderKind: Sendable, Hashable, RawRepresentable, CaseIterable, Codable,
    CustomStringConvertible
{
    public let rawValue: String
    let registration: ProviderRegistration

    init(_ registration: ProviderRegistration) {
        self.rawValue = registration.name
        self.registration = registration
    }

    /// The registered provider of this name; nil when none is.
    public init?(rawValue: String) {
        guard let registration = ProviderRegistry.registered.first(where: { $0.name == rawValue }) else {
            return nil
        }
        self.init(registration)
    }

    /// Every registered provider, in the registry's order.
    public static var allCases: [ProviderKind] { ProviderRegistry.registered.map(ProviderKind.init) }

    public static func == (lhs: ProviderKind, rhs: ProviderKind) -> Bool { lhs.rawValue == rhs.rawValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
    public var description: String { rawValue }

    /// What this provider's API can do.
    var capabilities: ProviderCapabilities { registration.capabilities }

    /// A provider of this kind, calling `baseURL` with `apiKey` (nil for one that needs none).
    func make(apiKey: String?, baseURL: String, options: ProviderOptions, logger: Logger)
        -> any CompletionProvider
    {
        registration.make(apiKey, baseURL, options, logger)
    }
}
