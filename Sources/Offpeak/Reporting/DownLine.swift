import Foundation

/// A provider route found down (`ProviderOutage`), as `status` shows it: its calls go to the
/// fallbacks until the time it asked for.
struct DownLine: Sendable, Equatable, Codable {
    /// The provider, its base URL and the model.
    var route: String
    var until: Date
    var reason: String
    /// The host that found it down.
    var host: String

    /// `down: openai https://api.openai.com/v1 gpt-4.1 until 2026-11-29T18:20:00Z (found by vm):
    /// provider answered HTTP 529 …`.
    var text: String {
        "down: \(route) until \(Timestamp.text(until)) (found by \(host)): \(TextTable.oneLine(reason))\n"
    }

    /// A line per outage, soonest over first; nil when there is none.
    static func lines(_ outages: [String: ProviderOutage]) -> [DownLine]? {
        guard !outages.isEmpty else { return nil }
        return outages.values.sorted { ($0.until, $0.key) < ($1.until, $1.key) }.map {
            DownLine(route: $0.key, until: $0.until, reason: $0.reason, host: $0.host)
        }
    }
}
