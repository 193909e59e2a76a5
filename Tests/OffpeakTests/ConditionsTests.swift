import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// A fake sysfs tree in a temporary folder, removed when the test ends. It holds `class/`, as
/// every sysfs does (a root without it is not one: `SysfsTree.rootFailure`).
final class FakeSysfs {
    let root: URL

    init() throws {
        root = FileManager.default.temporaryDirectory
            .appendingPathComponent("offpeak-sysfs-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("class"), withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    /// Writes `contents` plus a newline, as the kernel does.
    func write(_ path: String, _ contents: String) throws {
        let url = root.appendingPathComponent(path)
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data((contents + "\n").utf8).write(to: url)
    }

    func mkdir(_ path: String) throws {
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent(path), withIntermediateDirectories: true)
    }

    func supply(_ name: String, _ attributes: [String: String]) throws {
        for (key, value) in attributes { try write("class/power_supply/\(name)/\(key)", value) }
    }

    /// A physical interface; `carrier: nil` leaves the file out.
    func interface(
        _ name: String, operstate: String = "up", carrier: String? = "1", type: String = "1",
        devtype: String? = nil
    ) throws {
        let base = "class/net/\(name)"
        try write("\(base)/operstate", operstate)
        if let carrier { try write("\(base)/carrier", carrier) }
        try write("\(base)/type", type)
        try write(
            "\(base)/uevent", "INTERFACE=\(name)\nIFINDEX=2" + (devtype.map { "\nDEVTYPE=\($0)" } ?? ""))
    }

    func power() -> PowerState { PowerState.read(sysfsRoot: root) }

    func network(metered: [String] = [], unmetered: [String] = []) -> NetworkState {
        NetworkState.read(sysfsRoot: root, metered: metered, unmetered: unmetered)
    }
}

@Suite(.ownThreads) struct ConditionsTests {
    // MARK: Power

    @Test func laptopOnBattery() throws {
        let fs = try FakeSysfs()
        try fs.supply("AC", ["type": "Mains", "online": "0"])
        try fs.supply(
            "BAT0",
            ["type": "Battery", "status": "Discharging", "capacity": "42", "present": "1", "scope": "System"])
        let power = fs.power()
        #expect(!power.onAC)
        #expect(power.batteryPercent == 42)
        #expect(!power.batteryLow)
        #expect(!power.lowPower)
        #expect(power.why.contains("BAT0"))
        #expect(
            power.readings.contains {
                $0.file == "class/power_supply/BAT0/status" && $0.value == "Discharging"
            })
    }

    @Test func lowBatteryAtThreshold() throws {
        let fs = try FakeSysfs()
        try fs.supply("BAT0", ["type": "Battery", "status": "Discharging", "capacity": "15"])
        #expect(fs.power().batteryLow)
        try fs.supply("BAT0", ["capacity": "16"])
        #expect(!fs.power().batteryLow)
    }

    @Test func onACCharging() throws {
        let fs = try FakeSysfs()
        try fs.supply("ADP1", ["type": "Mains", "online": "1"])
        try fs.supply("BAT0", ["type": "Battery", "status": "Charging", "capacity": "10"])
        let power = fs.power()
        #expect(power.onAC)
        #expect(power.batteryPercent == 10)
        #expect(power.batteryLow)
        #expect(power.why.contains("ADP1"))
    }

    @Test func pluggedInAtChargeLimit() throws {
        let fs = try FakeSysfs()
        // Some firmwares report the adapter offline while holding the charge; the battery says why.
        try fs.supply("AC", ["type": "Mains", "online": "0"])
        try fs.supply("BAT0", ["type": "Battery", "status": "Not charging", "capacity": "80"])
        let power = fs.power()
        #expect(power.onAC)
        #expect(power.batteryPercent == 80)
    }

    @Test func desktopWithoutBattery() throws {
        let fs = try FakeSysfs()
        let none = fs.power()
        #expect(none.onAC && none.batteryPercent == nil && !none.batteryLow)
        #expect(none.readings.contains { $0.file == "class/power_supply" && $0.value == "missing" })
        try fs.mkdir("class/power_supply")
        #expect(fs.power().onAC)
    }

    @Test func peripheralBatteryIsIgnored() throws {
        let fs = try FakeSysfs()
        try fs.supply("AC", ["type": "Mains", "online": "1"])
        try fs.supply(
            "hidpp_battery_0",
            ["type": "Battery", "scope": "Device", "status": "Discharging", "capacity": "5"])
        let power = fs.power()
        #expect(power.onAC)
        #expect(power.batteryPercent == nil)
        #expect(!power.batteryLow)
        // Without the mains, a lone peripheral battery still does not mean "on battery".
        try fs.supply("AC", ["online": "0"])
        #expect(fs.power().onAC)
    }

    @Test func absentBatteryIsIgnored() throws {
        let fs = try FakeSysfs()
        try fs.supply("BAT1", ["type": "Battery", "present": "0", "status": "Discharging", "capacity": "0"])
        let power = fs.power()
        #expect(power.onAC && power.batteryPercent == nil)
    }

    @Test func usbSupplyOnlineCountsAsAC() throws {
        let fs = try FakeSysfs()
        try fs.supply("ucsi-source-psy-USBC000:001", ["type": "USB", "online": "1"])
        try fs.supply("BAT0", ["type": "Battery", "status": "Discharging", "capacity": "50"])
        #expect(fs.power().onAC)
    }

    @Test func lowPowerProfile() throws {
        let fs = try FakeSysfs()
        for (profile, low) in [("low-power", true), ("quiet", true), ("cool", true), ("balanced", false)] {
            try fs.write("firmware/acpi/platform_profile", profile)
            #expect(fs.power().lowPower == low, "\(profile)")
        }
    }

    @Test func garbagePowerFiles() throws {
        let fs = try FakeSysfs()
        try fs.supply("BAT0", ["type": "Battery", "status": "Discharging", "capacity": "abc"])
        try fs.supply("AC", ["type": "Mains", "online": "yes"])
        try fs.supply("BAT1", ["type": ""])
        try fs.supply("BAT2", ["type": "Battery", "capacity": "250"])
        try fs.write("firmware/acpi/platform_profile", "turbo")
        let power = fs.power()
        #expect(power.failure == nil)
        #expect(!power.onAC)
        #expect(power.batteryPercent == nil)
        #expect(!power.batteryLow)
        #expect(!power.lowPower)
        let values = Dictionary(
            power.readings.map { ($0.file, $0.value) }, uniquingKeysWith: { first, _ in first })
        #expect(values["class/power_supply/BAT0/capacity"] == "abc")
        #expect(values["class/power_supply/BAT1/type"] == "")
        #expect(values["class/power_supply/BAT2/status"] == "missing")
        #expect(values["class/power_supply/BAT2/capacity"] == "250")
        #expect(values["firmware/acpi/platform_profile"] == "turbo")
        #expect(power.readings.allSatisfy { !$0.rule.isEmpty })
    }

    /// A folder where a file should be cannot be read: that is no value to fall back from, so
    /// power is unknown (it used to count as "no battery": issue 21).
    @Test func aFolderWhereAPowerFileShouldBeLeavesPowerUnknown() throws {
        for file in [
            "class/power_supply/BAT1/type", "class/power_supply/BAT1/status",
            "firmware/acpi/platform_profile",
        ] {
            let fs = try FakeSysfs()
            try fs.supply("BAT1", ["type": "Battery", "status": "Discharging", "capacity": "50"])
            try? FileManager.default.removeItem(at: fs.root.appendingPathComponent(file))
            try fs.mkdir(file)
            let power = fs.power()
            let path = fs.root.appendingPathComponent(file).path
            #expect(power.failure == SysfsFailure(path: path, reason: "Is a directory"), "\(file)")
            #expect(power.readings.first { $0.file == file }?.value == "cannot be read (Is a directory)")
        }
    }

    @Test func hugeAndBinaryValuesDoNotCrash() throws {
        let fs = try FakeSysfs()
        try fs.supply("BAT0", ["type": "Battery", "status": String(repeating: "x", count: 100_000)])
        let url = fs.root.appendingPathComponent("class/power_supply/BAT0/capacity")
        try Data([0xFF, 0xFE, 0x00, 0x31]).write(to: url)
        let power = fs.power()
        #expect(power.onAC && power.batteryPercent == nil)
        #expect(power.readings.allSatisfy { $0.value.count <= 80 })
    }

    // MARK: Network

    @Test func wifiOnly() throws {
        let fs = try FakeSysfs()
        try fs.interface("wlp2s0", devtype: "wlan")
        try fs.interface("lo", operstate: "unknown", type: "772")
        let network = fs.network()
        #expect(network.online && network.unmetered)
        let wifi = try #require(network.interfaces.first { $0.name == "wlp2s0" })
        #expect(wifi.kind == .wifi && wifi.counts && !wifi.metered)
        let loopback = try #require(network.interfaces.first { $0.name == "lo" })
        #expect(!loopback.counts)
    }

    @Test func ethernetPlusModem() throws {
        let fs = try FakeSysfs()
        try fs.interface("enp0s31f6")
        try fs.interface("wwan0", type: "65534", devtype: "wwan")
        let network = fs.network()
        #expect(network.online && network.unmetered)
        let kinds = Dictionary(uniqueKeysWithValues: network.interfaces.map { ($0.name, $0.kind) })
        #expect(kinds == ["enp0s31f6": .ethernet, "wwan0": .wwan])
        #expect(network.interfaces.first { $0.name == "wwan0" }?.metered == true)
        #expect(network.interfaces.first { $0.name == "enp0s31f6" }?.metered == false)
    }

    @Test func modemOnlyIsMetered() throws {
        let fs = try FakeSysfs()
        try fs.interface("wwan0", type: "65534", devtype: "wwan")
        try fs.interface("eth0", operstate: "down", carrier: nil)
        let network = fs.network()
        #expect(network.online)
        #expect(!network.unmetered)
        // The workspace can say otherwise, either way.
        #expect(fs.network(unmetered: ["wwan0"]).unmetered)
        try fs.interface("wlan0", devtype: "wlan")
        #expect(fs.network().unmetered)
        #expect(!fs.network(metered: ["wlan*"]).unmetered)
        #expect(!fs.network(metered: ["wlan0"], unmetered: ["wlan0"]).unmetered)
    }

    @Test func everythingDown() throws {
        let fs = try FakeSysfs()
        try fs.interface("eth0", operstate: "down", carrier: nil)
        // Reading carrier of a down interface fails with EINVAL, which is no value
        // (`UnreadableConditionsTests`), as a missing file is.
        try fs.interface("wlan0", operstate: "dormant", carrier: nil, devtype: "wlan")
        try fs.interface("eth1", operstate: "up", carrier: "0")
        try fs.interface("lo", operstate: "unknown", type: "772")
        let network = fs.network()
        #expect(!network.online && !network.unmetered)
        #expect(network.interfaces.allSatisfy { !$0.counts })
        #expect(network.interfaces.first { $0.name == "eth0" }?.why.contains("down") == true)
    }

    @Test func unknownOperstateWithCarrierCounts() throws {
        let fs = try FakeSysfs()
        try fs.interface("ppp0", operstate: "unknown", type: "512")
        let network = fs.network()
        #expect(network.online && network.unmetered)
        #expect(network.interfaces.first?.kind == .other)
        try fs.interface("ppp0", operstate: "unknown", carrier: "0", type: "512")
        #expect(!fs.network().online)
    }

    @Test func virtualInterfacesDoNotCount() throws {
        let fs = try FakeSysfs()
        // The kernel's layout: class/net/NAME links to devices/virtual/net/NAME.
        try fs.interface("placeholder")
        try FileManager.default.removeItem(at: fs.root.appendingPathComponent("class/net/placeholder"))
        try fs.write("devices/virtual/net/docker0/operstate", "up")
        try fs.write("devices/virtual/net/docker0/carrier", "1")
        try fs.write("devices/virtual/net/docker0/type", "1")
        try FileManager.default.createSymbolicLink(
            atPath: fs.root.appendingPathComponent("class/net/docker0").path,
            withDestinationPath: "../../devices/virtual/net/docker0")
        // A fixture without links: a plain folder plus a devices/virtual/net/NAME folder.
        try fs.interface("veth1234")
        try fs.mkdir("devices/virtual/net/veth1234")
        let network = fs.network()
        #expect(!network.online)
        #expect(network.interfaces.map(\.name) == ["docker0", "veth1234"])
        #expect(network.interfaces.allSatisfy { !$0.counts })
        #expect(network.readings.contains { $0.file == "class/net/docker0" && $0.value.contains("virtual") })
    }

    @Test func garbageAndMissingNetworkFiles() throws {
        let fs = try FakeSysfs()
        try fs.interface("eth0", operstate: "sideways", carrier: "maybe", type: "ether")
        try fs.write("class/net/eth1/carrier", "1")
        try fs.write("class/net/eth1/type", "1")
        try fs.mkdir("class/net/eth2")
        let network = fs.network()
        let byName = Dictionary(uniqueKeysWithValues: network.interfaces.map { ($0.name, $0) })
        #expect(network.failure == nil)
        #expect(byName["eth0"]?.counts == false)
        #expect(byName["eth0"]?.kind == .other)
        // A missing operstate is treated as unknown, so the carrier decides.
        #expect(byName["eth1"]?.counts == true)
        #expect(byName["eth1"]?.kind == .ethernet)
        #expect(byName["eth2"]?.counts == false)
        #expect(network.online)
        #expect(network.readings.contains { $0.file == "class/net/eth1/operstate" && $0.value == "missing" })
        #expect(network.readings.contains { $0.file == "class/net/eth2/carrier" && $0.value == "missing" })
        #expect(fs.network().interfaces.count == 3)
        let empty = try FakeSysfs()
        #expect(!empty.network().online)
        // A folder where a file should be cannot be read: the network is unknown, not offline.
        try fs.mkdir("class/net/eth3/operstate")
        let unknown = fs.network()
        let path = fs.root.appendingPathComponent("class/net/eth3/operstate").path
        #expect(unknown.failure == SysfsFailure(path: path, reason: "Is a directory"))
        #expect(unknown.why == "Cannot read \(path) (Is a directory).")
    }

    // MARK: Together

    @Test func jsonShape() throws {
        let fs = try FakeSysfs()
        try fs.supply("BAT0", ["type": "Battery", "status": "Discharging"])
        try fs.interface("wlan0", devtype: "wlan")
        let conditions = MachineConditions.read(sysfsRoot: fs.root)
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let object = try #require(
            try JSONSerialization.jsonObject(with: encoder.encode(conditions)) as? [String: Any])
        let power = try #require(object["power"] as? [String: Any])
        #expect(power["on_ac"] as? Bool == false)
        #expect(power["battery_percent"] is NSNull)
        #expect(power["battery_low"] as? Bool == false)
        #expect(power["low_power"] as? Bool == false)
        let network = try #require(object["network"] as? [String: Any])
        #expect(network["online"] as? Bool == true)
        #expect(network["unmetered"] as? Bool == true)
        let interfaces = try #require(network["interfaces"] as? [[String: Any]])
        #expect(interfaces.first?["kind"] as? String == "wifi")
        #expect(Set(interfaces.first?.keys.map { $0 } ?? []) == ["name", "kind", "counts", "metered", "why"])
        let readings = try #require(object["readings"] as? [[String: Any]])
        #expect(readings.count == conditions.readings.count && !readings.isEmpty)
        #expect(conditions.text.contains("on battery"))
    }

    @Test func defaultRoot() {
        #expect(MachineConditions.defaultRoot(environment: [:]).path == "/sys")
        #expect(MachineConditions.defaultRoot(environment: ["OFFPEAK_SYSFS_ROOT": "/tmp/x"]).path == "/tmp/x")
    }

    /// This machine, whatever it is (a server with no power supplies, a laptop on battery): what
    /// `PowerState` reads from /sys agrees with the files, read here on their own by systemd's
    /// `ConditionACPower` rule. It asserted "on AC" before, which fails on any laptop on battery.
    @Test func thisMachine() throws {
        let sys = URL(fileURLWithPath: "/sys")
        let power = PowerState.read(sysfsRoot: sys)
        let files = Self.powerFromFiles(sys)
        #expect(power.onAC == files.onAC, "\(power.why)")
        #expect(power.batteryPercent == files.percent)
        let network = NetworkState.read(sysfsRoot: sys, metered: [], unmetered: [])
        let physicalUp =
            (try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/net"))?
            .filter { name in
                let link = try? FileManager.default.destinationOfSymbolicLink(
                    atPath: "/sys/class/net/\(name)")
                let state = try? String(contentsOfFile: "/sys/class/net/\(name)/operstate", encoding: .utf8)
                return name != "lo" && link?.contains("/virtual/") == false
                    && state?.trimmingCharacters(in: .whitespacesAndNewlines) == "up"
            } ?? []
        #expect(network.unmetered == !physicalUp.isEmpty)
        for interface in network.interfaces where interface.name == "lo" { #expect(!interface.counts) }
    }

    /// The same check on every committed fixture, on AC and on battery: the check itself is sound.
    @Test(arguments: ["ac-offline", "ac-wifi", "battery-wifi", "battery-wwan"])
    func fixtureReadingsAgreeWithTheirFiles(fixture: String) {
        let root = SwitchableSysfs.fixtures.appendingPathComponent(fixture, isDirectory: true)
        let files = Self.powerFromFiles(root)
        #expect(files.onAC == fixture.hasPrefix("ac-"))
        #expect(PowerState.read(sysfsRoot: root).onAC == files.onAC)
        #expect(PowerState.read(sysfsRoot: root).batteryPercent == files.percent)
    }

    /// `class/power_supply` read directly: on AC when a supply that is not a battery is online or
    /// no system battery (present, not a peripheral's) is discharging; the first such battery by
    /// name with a capacity from 0 to 100 gives the percent.
    static func powerFromFiles(_ root: URL) -> (onAC: Bool, percent: Int?) {
        let folder = root.appendingPathComponent("class/power_supply")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
        var online = false
        var discharging = false
        var percent: Int?
        for name in names {
            func read(_ file: String) -> String? {
                (try? String(contentsOf: folder.appendingPathComponent("\(name)/\(file)"), encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
            guard let type = read("type"), !type.isEmpty else { continue }
            guard type == "Battery" else {
                online = online || (Int(read("online") ?? "") ?? 0) > 0
                continue
            }
            if read("scope") == "Device" || read("present") == "0" { continue }
            discharging = discharging || read("status") == "Discharging"
            if percent == nil, let capacity = Int(read("capacity") ?? ""), (0...100).contains(capacity) {
                percent = capacity
            }
        }
        return (online || !discharging, percent)
    }
}
