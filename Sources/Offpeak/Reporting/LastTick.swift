import Foundation

/// When the workspace's last tick started, how long it took and how it exited: what the metrics
/// report as `offpeak_last_tick_*`, so an alert can see ticks that stopped or keep failing.
///
/// Kept in `cache/last-tick.json` (owner-only, replaced atomically), not in the store: a `run`
/// writes the metrics too, and must report the last tick it did not make.
struct LastTick: Codable, Sendable, Equatable {
    var startedAt: Date
    var durationSeconds: Double
    /// The tick's exit status (0, 75 when work remains, 65/69/74/78 for an error).
    var status: Int32

    static func url(in workspace: Workspace) -> URL {
        workspace.cacheDirectory.appendingPathComponent("last-tick.json")
    }

    /// The recorded tick, or nil when none was (or the file is unreadable: the metrics then leave
    /// the last tick out rather than fail).
    static func load(from url: URL) -> LastTick? {
        guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try? decoder.decode(LastTick.self, from: data)
    }

    func save(to url: URL) throws(OffpeakError) {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        let data: Data
        do { data = try encoder.encode(self) } catch {
            throw OffpeakError(.software, "cannot encode the last tick", cause: "\(error)")
        }
        try AtomicFile.write(data, to: url, options: AtomicFile.Options(mode: 0o600, durable: true))
    }
}
