import Foundation
import Synchronization

/// Gemini's explicit context caches (`cachedContents`) a provider made, by model and system
/// prompt, shared by every copy of the provider (and so by every call of a pass).
///
/// When it pays: a system prompt at least `minimumTokens(model)` long, seen a second time, gets
/// a cache for `ttl`; the calls after read it at the cache price. At Gemini's prices one use pays
/// for the cache's storage over its TTL (2.5 Flash: $1.00 per million tokens an hour, 10 minutes
/// of it $0.17, against $0.27 saved per million tokens read instead of sent), while a prompt seen
/// once, as a job of one call sends it, never gets one. The calls in flight while one is being
/// made go without it.
final class GeminiContextCaches: Sendable {
    /// How long a cache lives: its storage for this long is billed when it is made.
    static let ttl: TimeInterval = 600
    /// A cache is made again this long before its expiry, so no call names an expired one.
    static let margin: TimeInterval = 60

    /// The least a model caches explicitly: 1,024 tokens on Flash and Flash-Lite, 4,096 on Pro.
    static func minimumTokens(_ model: String) -> Int {
        model.contains("flash") ? 1024 : 4096
    }

    enum Plan: Equatable {
        /// Send the system prompt as it is.
        case plain
        /// Make the cache, then name it (this caller alone).
        case create
        /// Name this cache.
        case use(String)
    }

    private enum Slot {
        case seen
        case creating
        case held(name: String, expires: Date)
    }

    private let slots = Mutex<[String: Slot]>([:])

    /// What the call with this prompt does, and (for `create`) the promise to `made` or `failed`.
    func plan(_ key: String, now: Date) -> Plan {
        slots.withLock { slots in
            switch slots[key] {
            case nil:
                slots[key] = .seen
                return .plain
            case .seen:
                slots[key] = .creating
                return .create
            case .creating:
                return .plain
            case .held(let name, let expires):
                if expires.timeIntervalSince(now) > Self.margin { return .use(name) }
                slots[key] = .creating
                return .create
            }
        }
    }

    func made(_ key: String, name: String, expires: Date) {
        slots.withLock { $0[key] = .held(name: name, expires: expires) }
    }

    /// The cache could not be made or used: the prompt goes plain, and is tried again when seen.
    func failed(_ key: String) {
        slots.withLock { $0[key] = .seen }
    }
}
