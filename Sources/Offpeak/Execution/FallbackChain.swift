import Foundation

/// Where a job's calls may go, in order: the configured provider and model first, then each
/// fallback (`fallbacks:` in offpeak.yaml or the job's spec). Calls go to the first route that is
/// not down (`ProviderOutage`); a route that cannot answer is noted down until the time it asked
/// for, or `retryAfter`, and tried again after it.
struct FallbackChain: Sendable {
    let routes: [ProviderRoute]
    /// How long a route that failed without a `retry-after` is left alone (`retry_primary_after`).
    let retryAfter: TimeInterval

    /// A fallback made for a tier: the provider to call and the model it answers with.
    struct Step: Sendable {
        let provider: any CompletionProvider
        let model: String

        /// Its key in the store's outages.
        var key: String {
            ProviderOutage.key(provider: provider.kind, baseURL: provider.baseURL, model: model)
        }
        /// `openai gpt-4.1-mini`, as messages name it.
        var name: String { "\(provider.kind.rawValue) \(model)" }
    }

    /// One route: a step of the chain (the configured provider and model first), and the limiter
    /// of its calls.
    struct ProviderRoute: Sendable {
        let step: Step
        let limiter: CallLimiter

        var provider: any CompletionProvider { step.provider }
        var model: String { step.model }
        var key: String { step.key }
        var name: String { step.name }
    }

    /// The routes that are down at `now` (`outages`), said for a stop: `anthropic claude-sonnet-4-5
    /// until 2026-11-29 18:20:00 (provider answered HTTP 529: ...)`.
    func down(_ outages: [String: ProviderOutage]) -> String {
        routes.compactMap { route in
            outages[route.key].map { "\(route.name) until \(Timestamp.text($0.until)) (\($0.reason))" }
        }.joined(separator: "; ")
    }
}

extension FallbackChain {
    /// Items answered by fallbacks, by route, in the order they first answered.
    struct Answered: Sendable {
        var items: [(route: String, count: Int)] = []

        mutating func add(_ count: Int, by route: String) {
            guard count > 0 else { return }
            if let index = items.firstIndex(where: { $0.route == route }) {
                items[index].count += count
            } else {
                items.append((route, count))
            }
        }

        /// `3 answered by the fallback openai gpt-4.1-mini`; nil when none was.
        var clause: String? {
            items.isEmpty
                ? nil
                : items.map { "\($0.count) answered by the fallback \($0.route)" }.joined(separator: ", ")
        }
    }

    /// Which route a pass sends to now, and when a route before it is to be tried again.
    struct Standing: Sendable {
        var current = 0
        /// The end of the earliest outage of the routes before `current`: from then the pass plans
        /// its next round for the better route.
        var betterDueAt: Date?
        /// A call of the round found its route down: no other call of the round starts.
        var leaving = false
    }
}
