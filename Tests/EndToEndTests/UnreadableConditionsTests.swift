import Foundation
import OffpeakTestSupport
import Testing

/// Conditions that cannot be read (issue 21, item 1), through the binary: a wrong `--sysfs-root`
/// is a configuration error naming it; a file under the root that cannot be read is an error
/// naming the file for `queue` and `conditions`, and defers the jobs that need it, naming the file,
/// with nothing dropped. It used to read as "no battery, offline" and exit 0.
@Suite(.ownThreads) struct UnreadableConditionsTests {
    static let nowhere = "/nonexistent/offpeak-sys"
    static let expected = "expected a sysfs tree like /sys (a folder holding class/)"

    /// A copy of the `ac-wifi` fixture whose `relative` file gives `EIO` when read (a link to
    /// `/proc/self/mem`, which fails so from offset 0 for every user).
    static func failing(_ relative: String, in user: OtherUser) throws -> URL {
        let root = try user.copy(SwitchableSysfs.fixtures.appendingPathComponent("ac-wifi"), as: "sys")
        let file = root.appendingPathComponent(relative)
        try FileManager.default.removeItem(at: file)
        try FileManager.default.createSymbolicLink(atPath: file.path, withDestinationPath: "/proc/self/mem")
        return root
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func aWrongSysfsRootIsAConfigurationErrorNamingIt() throws {
        let workspace = try TemporaryWorkspace()
        let file = workspace.root.appendingPathComponent("offpeak.yaml")
        try workspace.write("offpeak.yaml", "provider: sim\n")
        let queue = try workspace.offpeak(["queue", "--sysfs-root", Self.nowhere])
        #expect(queue.status == 78)
        #expect(
            queue.stdout
                == "now: conditions unknown: cannot read \(Self.nowhere) (No such file or directory)\n"
                + "deferred: nothing\n")
        #expect(
            queue.stderr
                == "offpeak: --sysfs-root \(Self.nowhere): cannot read \(Self.nowhere) (No such file or directory); "
                + "\(Self.expected)\n")
        let conditions = try workspace.offpeak(["conditions"], environment: ["OFFPEAK_SYSFS_ROOT": file.path])
        #expect(conditions.status == 78)
        #expect(
            conditions.stdout
                == "Power: unknown. Cannot read \(file.path) (Not a directory).\n"
                + "Network: unknown. Cannot read \(file.path) (Not a directory).\n"
                + "Readings (under \(file.path)):\n")
        #expect(
            conditions.stderr
                == "offpeak: OFFPEAK_SYSFS_ROOT \(file.path): cannot read \(file.path) (Not a directory); "
                + "\(Self.expected)\n")
        let bare = try workspace.offpeak(["conditions", "--json", "--sysfs-root", workspace.root.path])
        #expect(bare.status == 78)
        let report = try Self.json(bare.stdout)
        let classFolder = workspace.root.appendingPathComponent("class").path
        #expect(
            report["error"] as? String
                == "--sysfs-root \(workspace.root.path): cannot read \(classFolder) (No such file or directory); "
                + Self.expected)
    }

    @Test func aRunWithAWrongRootFailsAndDefersNothing() throws {
        let sim = try SimProcess()
        let workspace = try TemporaryWorkspace.docs(on: sim, documents: 2)
        let run = try workspace.offpeak(["run", "docs", "--sysfs-root", Self.nowhere])
        #expect(run.status == 78)
        #expect(run.stdout == "")
        #expect(
            run.stderr
                == "offpeak: --sysfs-root \(Self.nowhere): cannot read \(Self.nowhere) (No such file or directory); "
                + "\(Self.expected)\n")
        let fixture = SwitchableSysfs.fixtures.appendingPathComponent("ac-wifi").path
        let queue = try workspace.offpeak(["queue", "--sysfs-root", fixture])
        #expect(queue.stdout == "now: on AC (54 %); online, unmetered (wlan0)\ndeferred: nothing\n")
        #expect(try TickTests.calls(sim) == 0)
    }

    /// The battery's `status` cannot be read: `queue` says so (69); a job with `power: ac` is
    /// deferred naming the file, a job that needs no power reading runs, and once the file reads
    /// again a tick answers every item of the deferred one.
    @Test func aFileThatCannotBeReadDefersOnlyTheJobsThatNeedIt() throws {
        let sim = try SimProcess()
        let workspace = try TemporaryWorkspace.docs(on: sim, documents: 2, extra: "constraints: {power: ac}")
        try workspace.write(
            "jobs/free.yaml",
            "kind: prompt\ntemplate: \"{{item}}\"\nitems:\n  - {id: q, item: \"Why?\"}\nmax_tokens: 40\n")
        let user = try OtherUser()
        let root = try Self.failing("class/power_supply/BAT0/status", in: user)
        let status = root.appendingPathComponent("class/power_supply/BAT0/status").path
        let unread = "cannot read \(status) (Input/output error)"

        let queue = try workspace.offpeak(["queue", "--sysfs-root", root.path])
        #expect(queue.status == 69)
        #expect(queue.stdout == "now: conditions unknown: \(unread)\ndeferred: nothing\n")
        #expect(queue.stderr == "offpeak: \(unread): power is unknown\n")

        let run = try workspace.offpeak(["run", "docs", "--sysfs-root", root.path])
        #expect(run.status == 75)
        #expect(
            run.stdout
                == "job docs deferred: conditions unknown: \(unread); `offpeak tick` runs it once its conditions "
                + "hold, `offpeak run --force` runs it now\n")
        #expect(run.stderr == "")
        let free = try workspace.offpeak(["run", "free", "--sysfs-root", root.path])
        #expect(free.status == 0, "\(free.stdout) \(free.stderr)")
        #expect(try TickTests.calls(sim) == 1, "only the job that needs no power reading sent")

        let deferred = try Self.json(
            try workspace.offpeak(["queue", "--json", "--sysfs-root", root.path]).stdout)
        let entries = try #require(deferred["deferred"] as? [[String: Any]])
        #expect(entries.map { $0["job"] as? String } == ["docs"])
        #expect(entries.first?["reasons"] as? [String] == ["conditions unknown: \(unread)"])
        #expect(deferred["now"] as? String == "conditions unknown: \(unread)")

        let still = try workspace.offpeak(["tick", "--sysfs-root", root.path])
        #expect(still.status == 75, "\(still.stdout) \(still.stderr)")
        let fixture = SwitchableSysfs.fixtures.appendingPathComponent("ac-wifi").path
        let tick = try workspace.offpeak(["tick", "--sysfs-root", fixture])
        #expect(tick.status == 0, "\(tick.stdout) \(tick.stderr)")
        #expect(try TickTests.index(workspace, job: "docs").values.sorted() == ["done", "done"])
        #expect(try TickTests.calls(sim) == 3)
    }

    /// A fixture file with mode 000, read by a user file modes apply to (`nobody` as root):
    /// `conditions` shows power as unknown, naming the file, and exits 69.
    @Test func aFileWithModeZeroIsAnErrorNamingIt() throws {
        let user = try OtherUser()
        let root = try user.copy(SwitchableSysfs.fixtures.appendingPathComponent("ac-wifi"), as: "sys")
        let status = root.appendingPathComponent("class/power_supply/BAT0/status")
        try OtherUser.setMode(0o000, status)
        let unread = "cannot read \(status.path) (Permission denied)"
        let result = try user.offpeak([
            "conditions", "--json", "--sysfs-root", root.path, "--workspace", user.folder.path,
        ])
        #expect(result.status == 69, "\(result.stdout) \(result.stderr)")
        #expect(result.stderr == "offpeak: \(unread): power is unknown\n")
        let report = try Self.json(result.stdout)
        let power = try #require(report["power"] as? [String: Any])
        #expect(Set(power.keys) == ["on_ac", "battery_percent", "battery_low", "low_power", "why", "error"])
        #expect(power.values.filter { $0 is NSNull }.count == 4)
        #expect(power["why"] as? String == "Cannot read \(status.path) (Permission denied).")
        #expect(power["error"] as? String == unread)
        let network = try #require(report["network"] as? [String: Any])
        #expect(network["online"] as? Bool == true && network["unmetered"] as? Bool == true)
    }
}
