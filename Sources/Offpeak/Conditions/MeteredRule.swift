import Foundation

/// Whether one interface is metered, and which source said so. In order, the first with a firm
/// word decides:
/// 1. the workspace's lists (`network: {metered: [...], unmetered: [...]}` in offpeak.yaml): the
///    user knows best, and a name in `metered` beats the same name in `unmetered`;
/// 2. NetworkManager, when it runs and lists the interface as `yes` or `guess-yes` (metered) or
///    `no` (unmetered); `guess-no` and `unknown` are no firm word (see
///    `NetworkManagerAnswer.Metered.decision`);
/// 3. sysfs: a cellular modem (`DEVTYPE=wwan`) is metered, everything else is not.
enum MeteredRule {
    /// Who decided.
    enum Source: String, Sendable, Equatable, Codable {
        case workspace = "offpeak.yaml"
        case networkManager = "NetworkManager"
        case sysfs
    }

    struct Decision: Equatable {
        var metered: Bool
        var source: Source
        /// The clause for the interface's `why`, e.g. "metered per NetworkManager (yes)".
        var why: String
    }

    static func decide(
        name: String, kind: NetworkState.Interface.Kind, metered: [String], unmetered: [String],
        networkManager: NetworkManagerAnswer?
    ) -> Decision {
        if NetworkState.matches(name, metered) {
            return Decision(metered: true, source: .workspace, why: "metered per offpeak.yaml")
        }
        if NetworkState.matches(name, unmetered) {
            return Decision(metered: false, source: .workspace, why: "unmetered per offpeak.yaml")
        }
        let said = networkManager?.status == .running ? networkManager?.metered(name) : nil
        if let said, let decision = said.decision {
            return Decision(
                metered: decision, source: .networkManager,
                why: "\(decision ? "metered" : "unmetered") per NetworkManager (\(said.rawValue))")
        }
        let note = said.map { " (NetworkManager: \($0.rawValue))" } ?? ""
        if kind == .wwan {
            return Decision(metered: true, source: .sysfs, why: "cellular, metered by default\(note)")
        }
        return Decision(
            metered: false, source: .sysfs, why: "\(kind.displayName), unmetered by default\(note)")
    }
}
