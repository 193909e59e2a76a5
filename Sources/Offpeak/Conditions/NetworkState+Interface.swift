import Foundation

/// How one interface under `class/net` is read and decided (see `NetworkState.read` for the rules).
extension NetworkState {
    static func matches(_ name: String, _ list: [String]) -> Bool {
        list.contains { entry in
            entry.hasSuffix("*") ? name.hasPrefix(String(entry.dropLast())) : entry == name
        }
    }

    /// One interface under `class/net`: whether it counts, its kind, and whether it is metered;
    /// every file that cannot be read is passed to `note`.
    static func readInterface(
        _ name: String, tree: SysfsTree, note: (String, SysfsFailure?) -> Void,
        rule: (Interface.Kind) -> MeteredRule.Decision, readings: inout [Reading]
    ) -> Interface {
        let base = "class/net/\(name)"
        if name == "lo" {
            return Interface(name: name, kind: .other, counts: false, metered: false, why: "Loopback.")
        }
        /// Reads one file, noting it when it cannot be read.
        var unread: SysfsFailure?
        func read(_ file: String) -> SysfsValue {
            let value = tree.read(file)
            let failure = tree.failure(file, value)
            unread = unread ?? failure
            note(file, failure)
            return value
        }
        let virtualFolder = "devices/virtual/net/\(name)"
        let link: String?
        let hasVirtualFolder: Bool
        switch (tree.linkTarget(base), tree.exists(virtualFolder)) {
        case (.success(let target), .success(let exists)):
            (link, hasVirtualFolder) = (target, exists)
        case (.failure(let unread), _), (_, .failure(let unread)):
            let file = unread.path == tree.path(base) ? base : virtualFolder
            note(file, unread)
            readings.append(Reading(file: file, value: SysfsValue.failed(unread.reason).shown, rule: ""))
            return Interface(
                name: name, kind: .other, counts: false, metered: false,
                why: unread.sentence)
        }
        if link?.contains("devices/virtual/net/") == true || hasVirtualFolder {
            readings.append(
                Reading(
                    file: base, value: link ?? "\(virtualFolder) exists",
                    rule: "A virtual interface does not reach the network by itself."))
            return Interface(
                name: name, kind: .other, counts: false, metered: false, why: "A virtual interface.")
        }

        let type = read("\(base)/type")
        if type.integer == loopbackType {
            readings.append(Reading(file: "\(base)/type", value: type.shown, rule: "Type 772 is loopback."))
            return Interface(name: name, kind: .other, counts: false, metered: false, why: "Loopback.")
        }
        let uevent = read("\(base)/uevent")
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

        let operstate = read("\(base)/operstate")
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
                        ? "Unknown (or without a value): the carrier decides."
                        : "Not up: the interface is not usable."))
        var hasCarrier = false
        if statePasses {
            let carrier = read("\(base)/carrier")
            hasCarrier = carrier.integer == 1
            readings.append(
                Reading(
                    file: "\(base)/carrier", value: carrier.shown,
                    rule: hasCarrier
                        ? "Carrier 1: the link is connected."
                        : "No carrier (0, missing, no value or garbage): the link is not connected."))
        }
        let counts = statePasses && hasCarrier && unread == nil

        let decision = rule(kind)
        let usableWhy =
            unread.map { "Unknown: \($0.description)" }
            ?? (counts ? "Up with carrier" : statePasses ? "No carrier" : "Operstate \(state)")
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
