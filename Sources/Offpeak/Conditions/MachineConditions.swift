import Foundation

/// Power and network together, as `offpeak conditions` shows them and job constraints test them.
public struct MachineConditions: Sendable, Equatable, Encodable {
    var power: PowerState
    var network: NetworkState
    /// The sysfs root that was read.
    var sysfsRoot: String

    /// Every file read, power first.
    var readings: [Reading] { power.readings + network.readings }

    /// `$OFFPEAK_SYSFS_ROOT`, else `/sys`.
    static func defaultRoot(environment: [String: String]) -> URL {
        let path = environment["OFFPEAK_SYSFS_ROOT"].flatMap { $0.isEmpty ? nil : $0 } ?? "/sys"
        return URL(fileURLWithPath: path, isDirectory: true)
    }

    init(power: PowerState, network: NetworkState, sysfsRoot: String) {
        self.power = power
        self.network = network
        self.sysfsRoot = sysfsRoot
    }

    /// Reads both, asking `networkManager` too when given; never fails (see `PowerState.read`,
    /// `NetworkState.read` and `NetworkManagerSource` for the fallbacks).
    static func read(
        sysfsRoot: URL, metered: [String] = [], unmetered: [String] = [],
        networkManager: NetworkManagerSource? = nil
    ) -> MachineConditions {
        MachineConditions(
            power: PowerState.read(sysfsRoot: sysfsRoot),
            network: NetworkState.read(
                sysfsRoot: sysfsRoot, metered: metered, unmetered: unmetered,
                networkManager: networkManager?.read()),
            sysfsRoot: sysfsRoot.path)
    }

    enum CodingKeys: String, CodingKey {
        case power, network, readings
        case sysfsRoot = "sysfs_root"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(power, forKey: .power)
        try container.encode(network, forKey: .network)
        try container.encode(readings, forKey: .readings)
        try container.encode(sysfsRoot, forKey: .sysfsRoot)
    }

    /// The decisions, the interfaces and the readings, for a terminal.
    public var text: String {
        var out = ""
        out += "Power: \(power.onAC ? "on AC" : "on battery"). \(power.why)\n"
        let battery =
            power.batteryPercent.map { "\($0) %\(power.batteryLow ? " (low)" : " (not low)")" }
            ?? "unknown (not low)"
        out += "  battery: \(battery)\n"
        out += "  low-power profile: \(power.lowPower ? "yes" : "no")\n"
        out += "Network: \(network.online ? "online" : "offline")"
        out += network.online ? (network.unmetered ? ", unmetered" : ", metered only") : ""
        out += ". \(network.why) Decided by \(network.decidedBy.rawValue).\n"
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
