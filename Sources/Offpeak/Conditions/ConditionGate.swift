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
        /// The job waits for its model's cheaper hours (`wait_for_cheaper_prices`): the reason says
        /// until when and what it saves.
        case cheaperPrices = "waiting for cheaper prices"
        /// A reading the job needs could not be made (a file under the sysfs root that cannot be
        /// read): the stop's reason names the file. Never taken as the conditions holding or not.
        case unknown = "conditions unknown"
    }

    /// Where the conditions are read from: a sysfs root, NetworkManager (when it is to be asked)
    /// and the workspace's interface overrides.
    let sysfsRoot: URL
    /// Who named `sysfsRoot` (`--sysfs-root`, `OFFPEAK_SYSFS_ROOT`), nil for the default `/sys`.
    let rootNamedBy: String?
    let metered: [String]
    let unmetered: [String]
    let networkManager: NetworkManagerSource?

    init(
        sysfsRoot: URL, rootNamedBy: String? = nil, metered: [String] = [], unmetered: [String] = [],
        networkManager: NetworkManagerSource? = nil
    ) {
        self.sysfsRoot = sysfsRoot
        self.rootNamedBy = rootNamedBy
        self.metered = metered
        self.unmetered = unmetered
        self.networkManager = networkManager
    }

    /// Reads the conditions now: a few small files, plus NetworkManager's answer at most every
    /// few seconds (`NetworkManagerSource`), so cheap enough for every call boundary.
    public func read() -> MachineConditions {
        MachineConditions.read(
            sysfsRoot: sysfsRoot, rootNamedBy: rootNamedBy, metered: metered, unmetered: unmetered,
            networkManager: networkManager)
    }

    /// The job's failing constraints, in a fixed order. With `needsNetwork` (the provider is not on
    /// this machine), a machine with no usable interface is `offline` whatever the job asks.
    ///
    /// A part (power, network) that could not be read decides nothing: a job that needs it
    /// (`power: ac`, `battery_not_low`, `downgrade_on_battery`; `network`, or a provider elsewhere)
    /// gets `unknown`, and a job that does not need it is not held back by it.
    static func failing(
        _ constraints: JobSpec.Constraints, _ conditions: MachineConditions, needsNetwork: Bool,
        downgrades: Bool = false
    ) -> [Reason] {
        var reasons: [Reason] = []
        let needsNetwork = needsNetwork || constraints.network != .any
        let power = conditions.power.failure == nil ? conditions.power : nil
        let network = conditions.network.failure == nil ? conditions.network : nil
        if unread(constraints, conditions, needsNetwork: needsNetwork, downgrades: downgrades) != nil {
            reasons.append(.unknown)
        }
        if let power {
            if constraints.power == .ac && !power.onAC { reasons.append(.externalPower) }
            if constraints.batteryNotLow && power.batteryLow { reasons.append(.batteryLow) }
        }
        if let network {
            if constraints.network == .unmetered && network.online && !network.unmetered {
                reasons.append(.unmeteredNetwork)
            }
            if !network.online && needsNetwork { reasons.append(.offline) }
        }
        return reasons
    }

    /// The file the job needs that could not be read (power's first, then the network's), or nil.
    static func unread(
        _ constraints: JobSpec.Constraints, _ conditions: MachineConditions, needsNetwork: Bool,
        downgrades: Bool = false
    ) -> SysfsFailure? {
        let needsPower = constraints.power == .ac || constraints.batteryNotLow || downgrades
        let needsNetwork = needsNetwork || constraints.network != .any
        return (needsPower ? conditions.power.failure : nil)
            ?? (needsNetwork ? conditions.network.failure : nil)
    }

    /// The reasons in words, `unknown` with the file that could not be read: "conditions unknown:
    /// cannot read /sys/class/power_supply/BAT0/status (Input/output error)".
    static func sentence(_ reasons: [Reason], unread: SysfsFailure?) -> String {
        reasons.map { reason in
            guard reason == .unknown, let unread else { return reason.rawValue }
            return "\(reason.rawValue): \(unread.description)"
        }.joined(separator: "; ")
    }

    /// Whether the job runs one tier lower: asked for, and on battery or in a low-power profile.
    /// Not when power could not be read: then the job waits (`failing` with `downgrades`), or,
    /// forced, runs at its own tier.
    static func downgrades(_ spec: JobSpec, _ conditions: MachineConditions) -> Bool {
        spec.downgradeOnBattery && spec.tier.lower != spec.tier && conditions.power.failure == nil
            && (!conditions.power.onAC || conditions.power.lowPower)
    }

    /// Whether `spec` needs the power reading to decide its tier.
    static func mayDowngrade(_ spec: JobSpec) -> Bool {
        spec.downgradeOnBattery && spec.tier.lower != spec.tier
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
