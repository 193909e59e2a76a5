import Foundation
import Synchronization

/// Gemini's explicit context caches (`POST /v1beta/cachedContents`): a model's system instruction
/// kept under a name until its TTL passes. A `generateContent` call naming one is answered as if
/// the instruction were in it, and bills it as cached tokens (`cachedContentTokenCount`),
/// whatever the implicit cache's minimum.
final class GeminiCachedContents: Sendable {
    struct Entry: Sendable {
        var name: String
        var model: String
        var system: [SimConversation.SystemBlock]
        var tokens: Int
        var created: Date
        var expires: Date
    }

    private let entries = Mutex<[String: Entry]>([:])
    /// Caches created since the start (or the last reset).
    private let createdCount = Mutex(0)

    /// Gemini's least cacheable content.
    static let minimumTokens = 1024

    func create(model: String, system: [SimConversation.SystemBlock], ttl: TimeInterval, now: Date = Date())
        -> Entry
    {
        let tokens = system.reduce(0) { $0 + SimTokens.count($1.text) }
        let entry = Entry(
            name: "cachedContents/sim" + randomHex(), model: model, system: system, tokens: tokens,
            created: now,
            expires: now + ttl)
        entries.withLock { $0[entry.name] = entry }
        createdCount.withLock { $0 += 1 }
        return entry
    }

    /// The live cache of that name, or nil (never made, deleted, or expired).
    func entry(_ name: String, now: Date = Date()) -> Entry? {
        entries.withLock { entries in
            guard let entry = entries[name], entry.expires > now else { return nil }
            return entry
        }
    }

    func delete(_ name: String) -> Bool {
        entries.withLock { $0.removeValue(forKey: name) != nil }
    }

    var created: Int { createdCount.withLock { $0 } }

    /// The live caches, oldest first.
    func all(now: Date = Date()) -> [Entry] {
        entries.withLock { $0.values.filter { $0.expires > now }.sorted { $0.created < $1.created } }
    }

    func reset() {
        entries.withLock { $0.removeAll() }
        createdCount.withLock { $0 = 0 }
    }
}
