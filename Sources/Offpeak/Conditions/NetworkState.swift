import Foundation

/// The machine's network, decided from `class/net` (the kernel's sysfs-class-net ABI), what
/// NetworkManager says is metered, and the workspace's metered/unmetered interface lists.
struct NetworkState: Sendable, Equatable {
    /// One interface under `class/net` and what was decided about it.
    struct Interface: Sendable, Equatable, Codable {
        enum Kind: String, Sendable, Codable {
            case ethernet, wifi, wwan, other
        }

        var name: String
        var kind: Kind
        /// Usable: not loopback or virtual, up, with carrier.
        var counts: Bool
        /// Metered: cellular by default, or as the workspace's lists say.
        var metered: Bool
        /// One sentence: why it counts or not, and why it is metered or not.
        var why: String
        /// Who decided `metered` (listed by `NetworkState`'s `metered_by`, not here).
        var meteredBy: MeteredRule.Source = .sysfs

        enum CodingKeys: String, CodingKey {
            case name, kind, counts, metered, why
        }

        init(
            name: String, kind: Kind, counts: Bool, metered: Bool, why: String,
            meteredBy: MeteredRule.Source = .sysfs
        ) {
            self.name = name
            self.kind = kind
            self.counts = counts
            self.metered = metered
            self.why = why
            self.meteredBy = meteredBy
        }
    }

    /// Some usable interface exists.
    var online: Bool
    /// Some usable interface is not metered.
    var unmetered: Bool
    var interfaces: [Interface]
    /// One sentence: why `online` and `unmetered` are what they are.
    var why: String
    /// Every file read, with what it meant.
    var readings: [Reading]
    /// What NetworkManager said, or nil when it was not asked.
    var networkManager: NetworkManagerAnswer?

    init(
        online: Bool, unmetered: Bool, interfaces: [Interface] = [], why: String = "",
        readings: [Reading] = [], networkManager: NetworkManagerAnswer? = nil
    ) {
        self.online = online
        self.unmetered = unmetered
        self.interfaces = interfaces
        self.why = why
        self.readings = readings
        self.networkManager = networkManager
    }

    /// The source that decided `unmetered`: that of the interface `why` names (the first usable
    /// unmetered one, else the first usable one); sysfs when offline.
    var decidedBy: MeteredRule.Source {
        let usable = interfaces.filter(\.counts)
        return (usable.first { !$0.metered } ?? usable.first)?.meteredBy ?? .sysfs
    }

    /// `type` of an Ethernet-like interface (ARPHRD_ETHER), which WiFi and some modems share.
    static let etherType = 1
    /// `type` of the loopback interface (ARPHRD_LOOPBACK).
    static let loopbackType = 772

    /// Reads the network state under `sysfsRoot` (normally `/sys`). Never fails; fallbacks:
    /// - no `class/net` folder: offline;
    /// - `lo`, and any interface of `type` 772 (loopback), does not count;
    /// - an interface whose `class/net/NAME` link points under `devices/virtual/net`, or that has a
    ///   `devices/virtual/net/NAME` folder, is virtual (bridge, tunnel, ifb, veth) and does not count;
    /// - `operstate` missing, unreadable or garbage is treated as `unknown`: `up` and `unknown`
    ///   pass, anything else (`down`, `dormant`, ...) means not usable;
    /// - `carrier` other than `1` (including the read error a down interface gives, a missing file
    ///   and garbage) means no carrier, so not usable;
    /// - `uevent` missing or without `DEVTYPE`: the kind comes from `type` (1 is Ethernet, anything
    ///   else, missing or garbage is other); `DEVTYPE=wlan` is WiFi, `DEVTYPE=wwan` is cellular;
    /// - metered: as `MeteredRule` decides (the workspace's lists, then NetworkManager's firm
    ///   answers, then cellular is metered and everything else is not). A list entry ending in `*`
    ///   matches by prefix.
    static func read(
        sysfsRoot: URL, metered: [String] = [], unmetered: [String] = [],
        networkManager: NetworkManagerAnswer? = nil
    ) -> NetworkState {
        let tree = SysfsTree(root: sysfsRoot)
        var readings: [Reading] = []
        var interfaces: [Interface] = []
        let folder = "class/net"
        let names = tree.entries(folder)
        if names == nil {
            readings.append(
                Reading(file: folder, value: "missing", rule: "No network class: no interface, so offline."))
        }
        for name in names ?? [] {
            interfaces.append(
                readInterface(
                    name, tree: tree,
                    rule: { kind in
                        MeteredRule.decide(
                            name: name, kind: kind, metered: metered, unmetered: unmetered,
                            networkManager: networkManager)
                    }, readings: &readings))
        }
        let usable = interfaces.filter(\.counts)
        let free = usable.filter { !$0.metered }
        let why: String
        if usable.isEmpty {
            why = "No interface other than loopback or virtual ones is up with carrier."
        } else if let first = free.first {
            why = "\(first.name) is up with carrier and not metered."
        } else {
            why = "Only metered interfaces are up (\(usable.map(\.name).joined(separator: ", ")))."
        }
        return NetworkState(
            online: !usable.isEmpty, unmetered: !free.isEmpty, interfaces: interfaces, why: why,
            readings: readings, networkManager: networkManager)
    }

    static func matches(_ name: String, _ list: [String]) -> Bool {
        list.contains { entry in
            entry.hasSuffix("*") ? name.hasPrefix(String(entry.dropLast())) : entry == name
        }
    }

    private static func readInterface(
        _ name: String, tree: SysfsTree, rule: (Interface.Kind) -> MeteredRule.Decision,
        readings: inout [Reading]
    ) -> Interface {
        let base = "class/net/\(name)"
        if name == "lo" {
            return Interface(name: name, kind: .other, counts: false, metered: false, why: "Loopback.")
        }
        let link = tree.linkTarget(base)
        if link?.contains("devices/virtual/net/") == true || tree.exists("devices/virtual/net/\(name)") {
            readings.append(
                Reading(
                    file: base, value: link ?? "devices/virtual/net/\(name) exists",
                    rule: "A virtual interface does not reach the network by itself."))
            return Interface(
                name: name, kind: .other, counts: false, metered: false, why: "A virtual interface.")
        }

        let type = tree.read("\(base)/type")
        if type.integer == loopbackType {
            readings.append(Reading(file: "\(base)/type", value: type.shown, rule: "Type 772 is loopback."))
            return Interface(name: name, kind: .other, counts: false, metered: false, why: "Loopback.")
        }
        let uevent = tree.read("\(base)/uevent")
        let devtype = uevent.string.flatMap { text in
            text.split(whereSeparator: \.isNewline).first { $0.hasPrefix("DEVTYPE=") }
                .map { String($0.dropFirst("DEVTYPE=".count)) }
        }
        let kind: Interface.Kind
        switch devtype {
        case "wlan": kind = .wifi
        case "wwan": kind = .wwan
        case nil: kind = type.integer == etherType ? .ethernet : .other
        default: kind = .other
        }
        readings.append(
            Reading(
                file: "\(base)/uevent", value: uevent.shown,
                rule: devtype.map { "DEVTYPE=\($0) makes it \(kind.rawValue)." }
                    ?? "No DEVTYPE: the kind comes from type."))
        if devtype == nil {
            readings.append(
                Reading(
                    file: "\(base)/type", value: type.shown,
                    rule: kind == .ethernet
                        ? "Type 1 without DEVTYPE is Ethernet." : "Not type 1: some other kind of link."))
        }

        let operstate = tree.read("\(base)/operstate")
        let state = operstate.string ?? "unknown"
        let stateKnown = ["up", "down", "dormant", "lowerlayerdown", "notpresent", "testing", "unknown"]
            .contains(state)
        let statePasses = state == "up" || state == "unknown" || !stateKnown
        readings.append(
            Reading(
                file: "\(base)/operstate", value: operstate.shown,
                rule: state == "up"
                    ? "Up."
                    : statePasses
                        ? "Unknown (or unreadable): the carrier decides."
                        : "Not up: the interface is not usable."))
        var hasCarrier = false
        if statePasses {
            let carrier = tree.read("\(base)/carrier")
            hasCarrier = carrier.integer == 1
            readings.append(
                Reading(
                    file: "\(base)/carrier", value: carrier.shown,
                    rule: hasCarrier
                        ? "Carrier 1: the link is connected."
                        : "No carrier (0, missing, unreadable or garbage): the link is not connected."))
        }
        let counts = statePasses && hasCarrier

        let decision = rule(kind)
        let usableWhy =
            counts
            ? "Up with carrier"
            : statePasses ? "No carrier" : "Operstate \(state)"
        return Interface(
            name: name, kind: kind, counts: counts, metered: decision.metered,
            why: "\(usableWhy); \(decision.why).", meteredBy: decision.source)
    }
}

extension NetworkState.Interface.Kind {
    var displayName: String {
        switch self {
        case .ethernet: return "Ethernet"
        case .wifi: return "WiFi"
        case .wwan: return "cellular"
        case .other: return "other link"
        }
    }
}
