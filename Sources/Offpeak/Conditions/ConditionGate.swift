import Foundation

/// Decides whether a job may make provider calls now, from its constraints and the machine's
/// conditions (DESIGN.md, "When work runs").
public struct ConditionGate: Sendable {
    /// Why work waits, in the words `offpeak queue` shows.
    public enum Reason: String, Sendable, Codable, CaseIterable {
        case externalPower = "waiting for external power"
        case unmeteredNetwork = "waiting for an unmetered network"
        case batteryLow = "battery low"
        case offline
        /// A workspace or job budget (per day, per month) is reached: the stop's reason says which
        /// and when it resumes.
        case budget = "budget reached"
    }

    /// Where the conditions are read from: a sysfs root, NetworkManager (when it is to be asked)
    /// and the workspace's interface overrides.
    let sysfsRoot: URL
    let metered: [String]
    let unmetered: [String]
    let networkManager: NetworkManagerSource?

    init(
        sysfsRoot: URL, metered: [String] = [], unmetered: [String] = [],
        networkManager: NetworkManagerSource? = nil
    ) {
        self.sysfsRoot = sysfsRoot
        self.metered = metered
        self.unmetered = unmetered
        self.networkManager = networkManager
    }

    /// Reads the conditions now: a few small files, plus NetworkManager's answer at most every
    /// few seconds (`NetworkManagerSource`), so cheap enough for every call boundary.
    public func read() -> MachineConditions {
        MachineConditions.read(
            sysfsRoot: sysfsRoot, metered: metered, unmetered: unmetered, networkManager: networkManager)
    }

    /// The job's failing constraints, in a fixed order. With `needsNetwork` (the provider is not on
    /// this machine), a machine with no usable interface is `offline` whatever the job asks.
    static func failing(
        _ constraints: JobSpec.Constraints, _ conditions: MachineConditions, needsNetwork: Bool
    ) -> [Reason] {
        var reasons: [Reason] = []
        if constraints.power == .ac && !conditions.power.onAC { reasons.append(.externalPower) }
        if constraints.batteryNotLow && conditions.power.batteryLow { reasons.append(.batteryLow) }
        let online = conditions.network.online
        if constraints.network == .unmetered && online && !conditions.network.unmetered {
            reasons.append(.unmeteredNetwork)
        }
        if !online && (needsNetwork || constraints.network != .any) { reasons.append(.offline) }
        return reasons
    }

    /// Whether the job runs one tier lower: asked for, and on battery or in a low-power profile.
    static func downgrades(_ spec: JobSpec, _ conditions: MachineConditions) -> Bool {
        spec.downgradeOnBattery && spec.tier.lower != spec.tier
            && (!conditions.power.onAC || conditions.power.lowPower)
    }

    /// True when `baseURL` names this machine (a local model server or offpeak-sim), so calls need
    /// no network interface.
    static func isLocal(_ baseURL: String) -> Bool {
        guard let host = URLComponents(string: baseURL)?.host?.lowercased() else { return false }
        return host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
    }
}

extension Array where Element == ConditionGate.Reason {
    /// "waiting for external power; waiting for an unmetered network".
    var sentence: String { map(\.rawValue).joined(separator: "; ") }
}
