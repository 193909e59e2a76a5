import Foundation

/// Power and network together, as `offpeak conditions` shows them and job constraints test them.
public struct MachineConditions: Sendable, Equatable, Encodable {
    var power: PowerState
    var network: NetworkState
    /// The sysfs root that was read.
    var sysfsRoot: String
    /// Who named the root (`--sysfs-root`, `OFFPEAK_SYSFS_ROOT`), or nil for the default `/sys`.
    var rootNamedBy: String?
    /// Why the root is not a sysfs tree that can be read; power and network are then unknown.
    var rootFailure: SysfsFailure?

    /// Every file read, power first.
    var readings: [Reading] { power.readings + network.readings }

    /// `$OFFPEAK_SYSFS_ROOT`, else `/sys`.
    static func defaultRoot(environment: [String: String]) -> URL {
        let path = environment["OFFPEAK_SYSFS_ROOT"].flatMap { $0.isEmpty ? nil : $0 } ?? "/sys"
        return URL(fileURLWithPath: path, isDirectory: true)
    }

    /// `OFFPEAK_SYSFS_ROOT` when it names the root, for messages; nil when the root is `/sys`.
    static func rootVariable(_ environment: [String: String]) -> String? {
        environment["OFFPEAK_SYSFS_ROOT"].map { $0.isEmpty ? nil : "OFFPEAK_SYSFS_ROOT" } ?? nil
    }

    init(
        power: PowerState, network: NetworkState, sysfsRoot: String, rootNamedBy: String? = nil,
        rootFailure: SysfsFailure? = nil
    ) {
        self.power = power
        self.network = network
        self.sysfsRoot = sysfsRoot
        self.rootNamedBy = rootNamedBy
        self.rootFailure = rootFailure
    }

    /// Reads both, asking `networkManager` too when given (see `PowerState.read`, `NetworkState.read`
    /// and `NetworkManagerSource` for the fallbacks). Never throws: a root or a file that cannot be
    /// read leaves the part it belongs to unknown, with its `failure`, and `error` says so.
    static func read(
        sysfsRoot: URL, rootNamedBy: String? = nil, metered: [String] = [], unmetered: [String] = [],
        networkManager: NetworkManagerSource? = nil
    ) -> MachineConditions {
        if let failure = SysfsTree(root: sysfsRoot).rootFailure() {
            return MachineConditions(
                power: .unknown(failure), network: .unknown(failure), sysfsRoot: sysfsRoot.path,
                rootNamedBy: rootNamedBy, rootFailure: failure)
        }
        return MachineConditions(
            power: PowerState.read(sysfsRoot: sysfsRoot),
            network: NetworkState.read(
                sysfsRoot: sysfsRoot, metered: metered, unmetered: unmetered,
                networkManager: networkManager?.read()),
            sysfsRoot: sysfsRoot.path, rootNamedBy: rootNamedBy)
    }

    /// The first thing that could not be read: the root, else a power file, else a network file.
    var failure: SysfsFailure? { rootFailure ?? power.failure ?? network.failure }

    /// What a command that shows the conditions exits with when they could not all be read, or nil.
    /// A root the user named (`--sysfs-root`, `OFFPEAK_SYSFS_ROOT`) that is not a readable sysfs
    /// tree is their configuration (78); `/sys` itself, or a file in the tree, that cannot be read
    /// is the machine's state being unavailable (69).
    public var error: OffpeakError? {
        if let rootFailure, let rootNamedBy {
            return OffpeakError(
                .configuration,
                "\(rootNamedBy) \(sysfsRoot): \(rootFailure.description); "
                    + "expected a sysfs tree like /sys (a folder holding class/)")
        }
        if let rootFailure {
            return OffpeakError(
                .unavailable,
                "\(rootFailure.description): power and network are unknown "
                    + "(--sysfs-root or OFFPEAK_SYSFS_ROOT names another sysfs tree)")
        }
        if let failure = power.failure {
            return OffpeakError(.unavailable, "\(failure.description): power is unknown")
        }
        if let failure = network.failure {
            return OffpeakError(.unavailable, "\(failure.description): the network is unknown")
        }
        return nil
    }

    /// `error` when the root itself failed: a run cannot decide anything, so it stops there.
    var rootError: OffpeakError? { rootFailure == nil ? nil : error }

    enum CodingKeys: String, CodingKey {
        case power, network, readings, error
        case sysfsRoot = "sysfs_root"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(power, forKey: .power)
        try container.encode(network, forKey: .network)
        try container.encode(readings, forKey: .readings)
        try container.encode(sysfsRoot, forKey: .sysfsRoot)
        try container.encodeIfPresent(error?.description, forKey: .error)
    }

    /// The decisions, the interfaces and the readings, for a terminal.
    public var text: String {
        var out = ""
        if power.failure != nil {
            out += "Power: unknown. \(power.why)\n"
        } else {
            out += "Power: \(power.onAC ? "on AC" : "on battery"). \(power.why)\n"
            let battery =
                power.batteryPercent.map { "\($0) %\(power.batteryLow ? " (low)" : " (not low)")" }
                ?? "unknown (not low)"
            out += "  battery: \(battery)\n"
            out += "  low-power profile: \(power.lowPower ? "yes" : "no")\n"
        }
        if network.failure != nil {
            out += "Network: unknown. \(network.why)\n"
        } else {
            out += "Network: \(network.online ? "online" : "offline")"
            out += network.online ? (network.unmetered ? ", unmetered" : ", metered only") : ""
            out += ". \(network.why) Decided by \(network.decidedBy.rawValue).\n"
        }
        if let answer = network.networkManager {
            let said = answer.devices.map { "\($0.name) \($0.metered.rawValue)" }.joined(separator: ", ")
            out += "  NetworkManager: \(answer.status.rawValue). \(answer.why)"
            out += said.isEmpty ? "\n" : " Metered: \(said).\n"
        }
        if !network.interfaces.isEmpty {
            let table = TextTable(columns: ["INTERFACE", "KIND", "COUNTS", "METERED", "DECIDED BY", "WHY"])
            for interface in network.interfaces {
                table.add([
                    interface.name, interface.kind.rawValue, interface.counts ? "yes" : "no",
                    interface.metered ? "yes" : "no", interface.meteredBy.rawValue, interface.why,
                ])
            }
            out += table.render().split(separator: "\n").map { "  \($0)\n" }.joined()
        }
        out += "Readings (under \(sysfsRoot)):\n"
        for reading in readings {
            out += "  \(reading.file) = \(reading.value)\n      \(reading.rule)\n"
        }
        return out
    }
}
