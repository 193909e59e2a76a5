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
    /// The first file the decision needed that could not be read: then `online` and `unmetered`
    /// are not known, and whatever needs the network must wait (`ConditionGate`).
    var failure: SysfsFailure?

    init(
        online: Bool, unmetered: Bool, interfaces: [Interface] = [], why: String = "",
        readings: [Reading] = [], networkManager: NetworkManagerAnswer? = nil, failure: SysfsFailure? = nil
    ) {
        self.online = online
        self.unmetered = unmetered
        self.interfaces = interfaces
        self.why = why
        self.readings = readings
        self.networkManager = networkManager
        self.failure = failure
    }

    /// A network that could not be read at all (the sysfs root itself failed).
    static func unknown(_ failure: SysfsFailure) -> NetworkState {
        NetworkState(online: false, unmetered: false, why: failure.sentence, failure: failure)
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

    /// Reads the network state under `sysfsRoot` (normally `/sys`). A file or folder that is there
    /// but cannot be read sets `failure` and the state is unknown; otherwise the fallbacks are:
    /// - no `class/net` folder: offline;
    /// - `lo`, and any interface of `type` 772 (loopback), does not count;
    /// - an interface whose `class/net/NAME` link points under `devices/virtual/net`, or that has a
    ///   `devices/virtual/net/NAME` folder, is virtual (bridge, tunnel, ifb, veth) and does not count;
    /// - `operstate` missing, without a value or garbage is treated as `unknown`: `up` and `unknown`
    ///   pass, anything else (`down`, `dormant`, ...) means not usable;
    /// - `carrier` other than `1` (including the `EINVAL` a down interface answers with, a missing
    ///   file and garbage) means no carrier, so not usable;
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
        var failure: SysfsFailure?
        var failed: Set<String> = []
        /// Keeps the first failure, and which files failed.
        func note(_ file: String, _ unread: SysfsFailure?) {
            guard let unread else { return }
            failure = failure ?? unread
            failed.insert(file)
        }
        let folder = "class/net"
        var names: [String] = []
        switch tree.entries(folder) {
        case .missing:
            readings.append(
                Reading(file: folder, value: "missing", rule: "No network class: no interface, so offline."))
        case .failed(let reason):
            note(folder, SysfsFailure(path: tree.path(folder), reason: reason))
            readings.append(Reading(file: folder, value: SysfsValue.failed(reason).shown, rule: ""))
        case .names(let listed):
            names = listed
        }
        for name in names {
            interfaces.append(
                readInterface(
                    name, tree: tree, note: note,
                    rule: { kind in
                        MeteredRule.decide(
                            name: name, kind: kind, metered: metered, unmetered: unmetered,
                            networkManager: networkManager)
                    }, readings: &readings))
        }
        readings = readings.map { reading in
            guard failed.contains(reading.file) else { return reading }
            return Reading(
                file: reading.file, value: reading.value, rule: "Cannot be read, so the network is unknown.")
        }
        let usable = interfaces.filter(\.counts)
        let free = usable.filter { !$0.metered }
        let why: String
        if let failure {
            why = failure.sentence
        } else if usable.isEmpty {
            why = "No interface other than loopback or virtual ones is up with carrier."
        } else if let first = free.first {
            why = "\(first.name) is up with carrier and not metered."
        } else {
            why = "Only metered interfaces are up (\(usable.map(\.name).joined(separator: ", ")))."
        }
        return NetworkState(
            online: !usable.isEmpty, unmetered: !free.isEmpty, interfaces: interfaces, why: why,
            readings: readings, networkManager: networkManager, failure: failure)
    }
}
