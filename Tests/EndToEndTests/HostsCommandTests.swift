import Foundation
import OffpeakTestSupport
import Testing

/// `offpeak hosts` end to end (issue 23, item 6): two hosts, each its own `OFFPEAK_HOST` and its own
/// conditions, tick against one store; the list names each with its version, last tick, exit
/// status and conditions, in the exact text a user reads and in `--json`. On PostgreSQL each host
/// has its own workspace folder on the shared database; on SQLite, whose store is a workspace's
/// file, both hosts tick in one workspace.
@Suite(.ownThreads) struct HostsCommandTests {
    static let fixtures = SwitchableSysfs.fixtures

    static func json(_ text: String) throws -> [[String: Any]] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])
    }

    /// A `--json` time as the table shows it: local time, to the minute.
    static func shown(_ iso: Any?) throws -> String {
        let text = try #require(iso as? String)
        let date = try #require(ISO8601DateFormatter().date(from: text))
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = .current
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.string(from: date)
    }

    @Test func twoHostsOnOneStoreAreListedByNameWithTheirLastTicks() throws {
        let first = try TemporaryWorkspace()
        let second = TestStore.onPostgres ? try TemporaryWorkspace() : first
        let shared = try first.storeEnvironment()
        func offpeak(_ workspace: TemporaryWorkspace, _ arguments: [String], host: String? = nil) throws
            -> CommandResult
        {
            var environment: [String: String?] = shared.mapValues { $0 }
            environment["OFFPEAK_HOST"] = host
            return try workspace.offpeak(arguments, environment: environment)
        }

        let empty = try offpeak(second, ["hosts"])
        #expect(empty.status == 0, "\(empty.stderr)")
        #expect(empty.stdout == "no host has ticked on this store yet\n")
        #expect(try Self.json(try offpeak(second, ["hosts", "--json"]).stdout).isEmpty)

        // box-b, on battery, meets a spec it cannot read: its tick exits 65, and says so in the store.
        let broken = try second.write("jobs/broken.yaml", "kind: nonsense\n")
        let battery = Self.fixtures.appendingPathComponent("battery-wwan").path
        #expect(try offpeak(second, ["tick", "--sysfs-root", battery], host: "box-b").status == 65)
        try FileManager.default.removeItem(at: broken)
        let ac = Self.fixtures.appendingPathComponent("ac-wifi").path
        let tick = try offpeak(first, ["tick", "--sysfs-root", ac], host: "box-a")
        #expect(tick.status == 0, "\(tick.stderr)")

        let version = try offpeak(first, ["--version"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let listed = try offpeak(second, ["hosts", "--json"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let hosts = try Self.json(listed.stdout)
        #expect(hosts.map { $0["name"] as? String } == ["box-a", "box-b"])
        for host in hosts {
            #expect(
                Set(host.keys) == [
                    "name", "version", "first_seen_at", "last_tick_started_at", "last_tick_ended_at",
                    "last_tick_status", "runs_held", "calls_in_flight", "conditions",
                ])
            #expect(host["version"] as? String == version)
            #expect(host["runs_held"] as? Int == 0 && host["calls_in_flight"] as? Int == 0)
            #expect(host["last_tick_ended_at"] is String)
        }
        #expect(hosts.map { $0["last_tick_status"] as? Int } == [0, 65])
        let (a, b) = (
            try Self.shown(hosts[0]["last_tick_started_at"]), try Self.shown(hosts[1]["last_tick_started_at"])
        )
        let pad = String(repeating: " ", count: max(0, version.count - "VERSION".count))
        let column = String(repeating: " ", count: max(0, "VERSION".count - version.count))
        let text = try offpeak(first, ["hosts"])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(
            text.stdout == """
                HOST   VERSION\(pad)  LAST TICK         STATUS  RUNS HELD  CALLS IN FLIGHT  CONDITIONS
                box-a  \(version)\(column)  \(a)  0       0          0                on AC (54 %); online, unmetered (wlan0)
                box-b  \(version)\(column)  \(b)  65      0          0                on battery (54 %); online, metered (wwan0)

                """)
    }

    @Test func aHostNameThatIsNotOneStopsTheTickNamingWhereItCameFrom() throws {
        let workspace = try TemporaryWorkspace()
        let variable = try workspace.offpeak(["tick"], environment: ["OFFPEAK_HOST": "my laptop"])
        #expect(variable.status == 78)
        #expect(variable.stdout == "")
        #expect(
            variable.stderr
                == "offpeak: OFFPEAK_HOST: expected 1 to 64 letters, digits, '.', '_' or '-', got 'my laptop'\n"
        )
        try workspace.write("offpeak.yaml", "provider: sim\nhost: laptop/1\n")
        let file = try workspace.offpeak(["tick"], environment: ["OFFPEAK_HOST": nil])
        #expect(file.status == 78)
        #expect(
            file.stderr
                == "offpeak: offpeak.yaml:2:7: host: expected 1 to 64 letters, digits, '.', '_' or '-', got 'laptop/1'\n"
        )
        // The variable wins over the file, which wins over the hostname.
        try workspace.write("offpeak.yaml", "provider: sim\nhost: rack-1\n")
        let named = try workspace.offpeak(["tick"], environment: ["OFFPEAK_HOST": "laptop-1"])
        #expect(named.status == 0, "\(named.stderr)")
        #expect(try workspace.offpeak(["tick"], environment: ["OFFPEAK_HOST": nil]).status == 0)
        let hosts = try workspace.offpeak(["hosts", "--json"])
        #expect(try Self.json(hosts.stdout).map { $0["name"] as? String } == ["laptop-1", "rack-1"])
    }
}
