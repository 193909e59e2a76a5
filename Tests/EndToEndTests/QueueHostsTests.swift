import Foundation
import OffpeakTestSupport
import Testing

/// `offpeak queue` names the host whose conditions deferred each job (issue 23, item 4): each host
/// reads its own power and network, so a job a laptop on battery defers may run on a host on AC.
/// The hosts are processes with their own `OFFPEAK_HOST` and sysfs on the workspace's store.
@Suite(.ownThreads) struct QueueHostsTests {
    @Test func theQueueNamesTheHostThatDeferredAJobUntilAHostOnACRunsIt() throws {
        let sim = try SimProcess()
        let workspace = try TemporaryWorkspace.docs(
            on: sim, documents: 2, extra: "constraints: {power: ac, network: unmetered}")
        let laptop = try SwitchableSysfs("battery-wwan")
        let tablet = try SwitchableSysfs("battery-wifi")
        let box = try SwitchableSysfs("ac-wifi")
        let on = { (host: String, sysfs: SwitchableSysfs) -> [String: String?] in
            ["OFFPEAK_HOST": host, "OFFPEAK_SYSFS_ROOT": sysfs.root.path, "TZ": "UTC"]
        }

        let run = try workspace.offpeak(["run", "docs"], environment: on("laptop", laptop))
        #expect(run.status == 75, "\(run.stdout) \(run.stderr)")
        let first = try Self.deferral(workspace, on("laptop", laptop))
        let queue = try workspace.offpeak(["queue"], environment: on("laptop", laptop))
        #expect(queue.status == 0, "\(queue.stderr)")
        #expect(
            queue.stdout == """
                now: on battery (54 %); online, metered (wwan0)
                JOB   RUN\(first.pad)  WAITING  SINCE                 CHECKED               HOST    WHY
                docs  \(first.run)  2        \(first.since)  \(first.checked)  laptop  waiting for external power; waiting for an unmetered network

                """)
        #expect(first.host == "laptop")

        // The tablet, on battery on WiFi, defers it too, for its own reason: the row is its now,
        // deferred since the laptop's time.
        Thread.sleep(forTimeInterval: 1.1)
        let still = try workspace.offpeak(["tick"], environment: on("tablet", tablet))
        #expect(still.status == 75, "\(still.stdout) \(still.stderr)")
        let second = try Self.deferral(workspace, on("tablet", tablet))
        #expect(second.since == first.since && second.checked != first.checked && second.host == "tablet")
        let again = try workspace.offpeak(["queue"], environment: on("tablet", tablet))
        #expect(
            again.stdout == """
                now: on battery (54 %); online, unmetered (wlan0)
                JOB   RUN\(first.pad)  WAITING  SINCE                 CHECKED               HOST    WHY
                docs  \(first.run)  2        \(first.since)  \(second.checked)  tablet  waiting for external power

                """)

        // A host on AC and WiFi runs it at its next tick.
        let tick = try workspace.offpeak(["tick"], environment: on("box-a", box))
        #expect(tick.status == 0, "\(tick.stdout) \(tick.stderr)")
        #expect(try TickTests.calls(sim) == 2)
        let empty = try workspace.offpeak(["queue"], environment: on("box-a", box))
        #expect(empty.stdout == "now: on AC (54 %); online, unmetered (wlan0)\ndeferred: nothing\n")
    }

    /// The one deferral `queue --json` lists: its run, times and host, and the spaces that line
    /// the RUN heading up with the run's id.
    static func deferral(_ workspace: TemporaryWorkspace, _ environment: [String: String?]) throws
        -> (run: String, since: String, checked: String, host: String?, pad: String)
    {
        let queue = try workspace.offpeak(["queue", "--json"], environment: environment)
        let entries = try #require(try TickTests.json(queue.stdout)["deferred"] as? [[String: Any]])
        #expect(entries.count == 1)
        let entry = try #require(entries.first)
        let run = try #require(entry["run"] as? String)
        return (
            run, try #require(entry["deferred_at"] as? String), try #require(entry["checked_at"] as? String),
            entry["host"] as? String, String(repeating: " ", count: run.count - 3)
        )
    }
}
