import Foundation

/// A provider route (a provider, its base URL and a model) that could not answer: down, overloaded
/// or out of quota. Every process on the store sends its calls to the route's fallbacks until
/// `until`, the time the provider asked for (`retry-after`) or `retry_primary_after`, so no host has
/// to find it down again (`LimitStore.noteOutage`).
struct ProviderOutage: Sendable, Equatable {
    /// The route (`ProviderOutage.key`).
    var key: String
    var until: Date
    /// What the provider answered, redacted.
    var reason: String
    /// The host that found it, and when.
    var host: String
    var notedAt: Date

    /// The key of a route: its provider, base URL and model.
    static func key(provider: ProviderKind, baseURL: String, model: String) -> String {
        "\(provider.rawValue) \(baseURL) \(model)"
    }

    /// The table both engines keep outages in (SQLite's v32, PostgreSQL's version 24), written once
    /// for the two; frozen with those versions, as a migration's text is.
    static func tableStatements(postgres: Bool) -> [String] {
        let date = postgres ? "timestamptz" : "DATETIME"
        return [
            """
            CREATE TABLE provider_outages (
                key text NOT NULL PRIMARY KEY,
                until_at \(date) NOT NULL,
                reason text NOT NULL,
                host text NOT NULL,
                noted_at \(date) NOT NULL)
            """
        ]
    }
}
