import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// A sysfs root, or a file in it, that cannot be read (issue 21, item 1): never taken as "no
/// battery" or "offline", but an error naming the path, and work that needs the reading waits.
///
/// Tests run as root, which passes file modes; `/proc/self/mem` gives a real `EIO` to whoever
/// reads it from offset 0, so a link to it stands for a file the kernel cannot read. A mode-000
/// file, read as another user, is in the end-to-end `UnreadableConditionsTests`.
@Suite(.ownThreads) struct UnreadableConditionsTests {
    /// A fake sysfs whose `relative` file gives `EIO` when read.
    static func failingRead(_ fs: FakeSysfs, _ relative: String) throws {
        let url = fs.root.appendingPathComponent(relative)
        try? FileManager.default.removeItem(at: url)
        try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: "/proc/self/mem")
    }

    /// A laptop on AC with WiFi up, as `ac-wifi`.
    static func laptop() throws -> FakeSysfs {
        let fs = try FakeSysfs()
        try fs.supply("AC", ["type": "Mains", "online": "1"])
        try fs.supply("BAT0", ["type": "Battery", "status": "Charging", "capacity": "54"])
        try fs.interface("wlan0", devtype: "wlan")
        return fs
    }

    @Test func errnoSaysWhetherAValueIsMissingAbsentOrUnread() {
        #expect(SysfsValue.from(errno: ENOENT) == .missing)
        #expect(SysfsValue.from(errno: EINVAL) == .noValue("Invalid argument"))
        #expect(SysfsValue.from(errno: ENODATA) == .noValue("No data available"))
        #expect(SysfsValue.from(errno: ENODEV) == .noValue("No such device"))
        #expect(SysfsValue.from(errno: EACCES) == .failed("Permission denied"))
        #expect(SysfsValue.from(errno: EIO) == .failed("Input/output error"))
        #expect(SysfsValue.from(errno: EISDIR) == .failed("Is a directory"))
    }

    @Test func aFileTheKernelCannotReadIsAFailureNamingIt() throws {
        let fs = try Self.laptop()
        try Self.failingRead(fs, "class/power_supply/BAT0/status")
        let tree = SysfsTree(root: fs.root)
        #expect(tree.read("class/power_supply/BAT0/status") == .failed("Input/output error"))
        #expect(tree.read("class/power_supply/BAT9/status") == .missing)
        #expect(tree.read("class/power_supply/BAT0") == .failed("Is a directory"))
        #expect(tree.read("class/power_supply/BAT0/capacity") == .text("54"))
    }

    @Test func aPowerFileThatCannotBeReadLeavesPowerUnknown() throws {
        let fs = try Self.laptop()
        try Self.failingRead(fs, "class/power_supply/BAT0/status")
        let conditions = MachineConditions.read(sysfsRoot: fs.root)
        let path = fs.root.appendingPathComponent("class/power_supply/BAT0/status").path
        #expect(conditions.power.failure == SysfsFailure(path: path, reason: "Input/output error"))
        #expect(conditions.power.why == "Cannot read \(path) (Input/output error).")
        #expect(conditions.network.failure == nil && conditions.network.unmetered)
        let reading = try #require(conditions.readings.first { $0.file == "class/power_supply/BAT0/status" })
        #expect(reading.value == "cannot be read (Input/output error)")
        #expect(reading.rule == "Cannot be read, so power is unknown.")
        #expect(conditions.error?.status == .unavailable)
        #expect(conditions.error?.description == "cannot read \(path) (Input/output error): power is unknown")
        #expect(conditions.rootError == nil)
        #expect(
            conditions.text.hasPrefix(
                "Power: unknown. Cannot read \(path) (Input/output error).\nNetwork: online"))
    }

    @Test func onlyTheJobsThatNeedAnUnknownReadingWait() throws {
        let fs = try Self.laptop()
        try Self.failingRead(fs, "class/power_supply/BAT0/capacity")
        let conditions = MachineConditions.read(sysfsRoot: fs.root)
        let path = fs.root.appendingPathComponent("class/power_supply/BAT0/capacity").path
        let ac = JobSpec.Constraints(power: .ac)
        #expect(ConditionGate.failing(ac, conditions, needsNetwork: true) == [.unknown])
        #expect(
            ConditionGate.failing(.init(batteryNotLow: true), conditions, needsNetwork: false) == [.unknown])
        #expect(ConditionGate.failing(.init(network: .unmetered), conditions, needsNetwork: true).isEmpty)
        #expect(ConditionGate.failing(.init(), conditions, needsNetwork: true).isEmpty)
        #expect(
            ConditionGate.failing(.init(), conditions, needsNetwork: false, downgrades: true) == [.unknown])
        let unread = ConditionGate.unread(ac, conditions, needsNetwork: true)
        #expect(
            ConditionGate.sentence([.unknown], unread: unread)
                == "conditions unknown: cannot read \(path) (Input/output error)")
        var spec = JobSpec(name: "j", kind: .prompt, template: try Template("{{item}}"), output: "out/j")
        spec.downgradeOnBattery = true
        #expect(ConditionGate.mayDowngrade(spec))
        try fs.supply("AC", ["online": "0"])
        try fs.supply("BAT0", ["status": "Discharging"])
        let unplugged = MachineConditions.read(sysfsRoot: fs.root)
        #expect(unplugged.power.failure != nil)
        #expect(!ConditionGate.downgrades(spec, unplugged), "unknown power is not taken as on battery")
    }

    @Test func aNetworkFileThatCannotBeReadHoldsCallsThatNeedTheNetwork() throws {
        let fs = try Self.laptop()
        try Self.failingRead(fs, "class/net/wlan0/carrier")
        let conditions = MachineConditions.read(sysfsRoot: fs.root)
        let path = fs.root.appendingPathComponent("class/net/wlan0/carrier").path
        #expect(conditions.network.failure == SysfsFailure(path: path, reason: "Input/output error"))
        #expect(conditions.power.failure == nil && conditions.power.onAC)
        #expect(ConditionGate.failing(.init(power: .ac), conditions, needsNetwork: false).isEmpty)
        #expect(ConditionGate.failing(.init(), conditions, needsNetwork: true) == [.unknown])
        #expect(ConditionGate.failing(.init(network: .online), conditions, needsNetwork: false) == [.unknown])
        let decision = try CallGateTests.decide(CallGateTests.gate(), conditions: conditions)
        let reason = "conditions unknown: cannot read \(path) (Input/output error)"
        #expect(
            decision
                == .stop(
                    RunStop(state: .waiting, reason: reason, status: .temporaryFailure, deferred: [.unknown]))
        )
        #expect(try CallGateTests.decide(CallGateTests.gate(force: true), conditions: conditions) == .go)
    }

    @Test func aRootThatIsNotASysfsTreeIsAnErrorNamingIt() throws {
        let fs = try FakeSysfs()
        let missing = fs.root.appendingPathComponent("nowhere")
        let file = fs.root.appendingPathComponent("file")
        try Data("x\n".utf8).write(to: file)
        let bare = fs.root.appendingPathComponent("bare")
        try FileManager.default.createDirectory(at: bare, withIntermediateDirectories: false)
        let cases: [(URL, String, String)] = [
            (missing, missing.path, "No such file or directory"), (file, file.path, "Not a directory"),
            (bare, bare.appendingPathComponent("class").path, "No such file or directory"),
        ]
        for (root, path, reason) in cases {
            let failure = SysfsFailure(path: path, reason: reason)
            let conditions = MachineConditions.read(sysfsRoot: root)
            #expect(conditions.rootFailure == failure)
            #expect(conditions.power.failure == failure && conditions.network.failure == failure)
            #expect(ConditionGate.failing(.init(), conditions, needsNetwork: true) == [.unknown])
            #expect(
                conditions.error?.status == .unavailable, "/sys itself: the machine's state is unavailable")
            let named = MachineConditions.read(sysfsRoot: root, rootNamedBy: "--sysfs-root")
            #expect(named.error?.status == .configuration)
            #expect(
                named.rootError?.description
                    == "--sysfs-root \(root.path): cannot read \(path) (\(reason)); "
                    + "expected a sysfs tree like /sys (a folder holding class/)")
        }
        // A folder with `class/` in it is a sysfs tree, even with no power supplies or network.
        let empty = MachineConditions.read(sysfsRoot: fs.root)
        #expect(empty.failure == nil && empty.power.onAC && !empty.network.online)
    }

    @Test func jsonSaysWhatIsUnknownAndWhy() throws {
        let fs = try Self.laptop()
        try Self.failingRead(fs, "class/power_supply/AC/type")
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let object = try #require(
            try JSONSerialization.jsonObject(with: encoder.encode(MachineConditions.read(sysfsRoot: fs.root)))
                as? [String: Any])
        let path = fs.root.appendingPathComponent("class/power_supply/AC/type").path
        let power = try #require(object["power"] as? [String: Any])
        #expect(power["on_ac"] is NSNull && power["battery_percent"] is NSNull)
        #expect(power["error"] as? String == "cannot read \(path) (Input/output error)")
        #expect(object["error"] as? String == "cannot read \(path) (Input/output error): power is unknown")
        let network = try #require(object["network"] as? [String: Any])
        #expect(network["online"] as? Bool == true && network["error"] == nil)
    }
}

extension UnreadableConditionsTests {
    @Test func metricsCountAnUnknownConditionUnderItsOwnKind() {
        let reason =
            "conditions unknown: cannot read /sys/class/power_supply/BAT0/status (Input/output error)"
        #expect(MetricsText.reasonKind(reason) == "conditions_unknown")
        #expect(MetricsText.reasonKinds.contains("conditions_unknown"))
    }
}
