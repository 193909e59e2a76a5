import Foundation
import OffpeakTestSupport
import Testing

/// A host cut off from the store by its network (issue 23): host A runs in its own network
/// namespace and reaches the PostgreSQL server over one veth pair and offpeak-sim over another. Its
/// store link goes down while a call is out; A's lease expires, host B (this namespace) takes the
/// run over and finishes it; the link comes back, and A's commit, getting through at last, is refused.
@Suite(.ownThreads) struct NetworkCutTests {
    static let ip = URL(fileURLWithPath: "/usr/sbin/ip")

    /// A network namespace with two veth pairs to this one: one to the store, one to the sim.
    struct CutNetwork {
        let name: String
        let storeLink: String
        let subnet: Int

        init() throws {
            let tag = Int.random(in: 1_000...9_999)
            name = "opk-\(tag)"
            storeLink = "opks\(tag)"
            subnet = Int.random(in: 1...250)
            let simLink = "opkm\(tag)"
            let steps: [[String]] = [
                ["netns", "add", name],
                ["link", "add", storeLink, "type", "veth", "peer", "name", storeLink + "p"],
                ["link", "add", simLink, "type", "veth", "peer", "name", simLink + "p"],
                ["link", "set", storeLink + "p", "netns", name],
                ["link", "set", simLink + "p", "netns", name],
                ["addr", "add", "10.213.\(subnet).1/30", "dev", storeLink],
                ["addr", "add", "10.214.\(subnet).1/30", "dev", simLink],
                ["link", "set", storeLink, "up"],
                ["link", "set", simLink, "up"],
                [
                    "netns", "exec", name, "ip", "addr", "add", "10.213.\(subnet).2/30", "dev",
                    storeLink + "p",
                ],
                ["netns", "exec", name, "ip", "addr", "add", "10.214.\(subnet).2/30", "dev", simLink + "p"],
                ["netns", "exec", name, "ip", "link", "set", storeLink + "p", "up"],
                ["netns", "exec", name, "ip", "link", "set", simLink + "p", "up"],
                ["netns", "exec", name, "ip", "link", "set", "lo", "up"],
            ]
            for step in steps {
                let result = try CommandResult.run(NetworkCutTests.ip, step)
                if result.status != 0 {
                    remove()
                    throw CommandFailure(description: "ip \(step.joined(separator: " ")): \(result.stderr)")
                }
            }
        }

        var storeAddress: String { "10.213.\(subnet).1" }
        var simAddress: String { "10.214.\(subnet).1" }

        func storeLink(up: Bool) throws {
            let result = try CommandResult.run(
                NetworkCutTests.ip, ["link", "set", storeLink, up ? "up" : "down"])
            try #require(result.status == 0, "\(result.stderr)")
        }

        /// Deleting the namespace deletes the veth ends in it, and with them their peers here.
        func remove() {
            _ = try? CommandResult.run(NetworkCutTests.ip, ["netns", "del", name])
        }
    }

    struct CommandFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// On AC and an unmetered network, whatever the namespace's own interfaces say.
    static let onAC = SwitchableSysfs.fixtures.appendingPathComponent("ac-wifi").path

    static func workspace(simURL: String) throws -> TemporaryWorkspace {
        let workspace = try TemporaryWorkspace()
        try workspace.write(
            "offpeak.yaml", "provider: sim\nbase_url: \(simURL)\nlease: 3s\nlimits: {sim: {in_flight: 1}}\n")
        try workspace.write(
            "jobs/fruit.yaml",
            "kind: prompt\ntemplate: \"Tell me about {{item}}.\"\nitems: [apples, pears]\nbatching: off\n"
                + "max_tokens: 50\n")
        return workspace
    }

    @Test(
        .enabled(
            if: TestStore.onPostgres && OtherUser.isRoot && FileManager.default.fileExists(atPath: ip.path),
            "network namespaces need root and iproute2; hosts share only a PostgreSQL store"))
    func aHostCutOffFromTheStoreMidCallLosesItsRunAndKeepsNoSecondAnswer() throws {
        let network = try CutNetwork()
        defer { network.remove() }
        let cluster = try PostgresCluster(
            alsoListeningOn: network.storeAddress, clients: "10.213.\(network.subnet).0/30")
        let database = try cluster.makeDatabase()
        let hostA = database.replacingOccurrences(of: "@127.0.0.1:", with: "@\(network.storeAddress):")
        // Each call takes 2 s: A's first one is out when its store link goes down.
        let sim = try SimProcess(arguments: ["--host", "0.0.0.0", "--latency-ms", "2000"])
        let a = try Self.workspace(simURL: "http://\(network.simAddress):\(sim.port)")
        let b = try Self.workspace(simURL: sim.url)
        let shared = cluster.environment
        let cut = try Spawned(
            Self.ip,
            [
                "netns", "exec", network.name, BuiltBinaries.offpeak.path, "run", "fruit", "--workspace",
                a.root.path, "--sysfs-root", Self.onAC,
            ],
            environment: shared.merging(["OFFPEAK_STORE": hostA, "OFFPEAK_HOST": "box-a"]) { $1 })
        let deadline = Date() + 30
        while try TickTests.calls(sim) < 1 {
            if Date() >= deadline {
                cut.signal(SIGKILL)
                let said = cut.wait(timeout: 10)
                Issue.record("host A never called the sim: \(said?.stdout ?? "") \(said?.stderr ?? "")")
                return
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        try network.storeLink(up: false)
        // A's lease (3 s, renewed by commits it cannot make) runs out; B takes the run over.
        Thread.sleep(forTimeInterval: 3.5)
        let finished = try b.offpeak(
            ["run", "fruit", "--sysfs-root", Self.onAC],
            environment: shared.merging(["OFFPEAK_STORE": database, "OFFPEAK_HOST": "box-b"]) { $1 }.mapValues
            {
                Optional($0)
            })
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(finished.stdout.hasPrefix("job fruit: 2 of 2 items answered (2 now)"), "\(finished.stdout)")
        try network.storeLink(up: true)
        let late = try #require(cut.wait(timeout: 120))
        #expect(late.status == 75, "\(late.stdout) \(late.stderr)")
        let run = try #require(
            try cluster.psql("SELECT id FROM runs", database: Self.name(database)).split(separator: "\n")
                .first)
        // The lease ends with B's pass but still names B's process.
        let owner = try cluster.psql("SELECT owner FROM leases", database: Self.name(database))
        #expect(
            late.stderr
                == "offpeak: run \(run) was taken over by \(owner) after this process's lease on it expired; "
                + "the answers of its last call were not kept\n")
        // One answer per item, B's; A's call was paid for and not kept.
        let answers = try cluster.psql(
            "SELECT q.item_id || ' ' || count(*) FROM results r JOIN requests q ON q.id = r.request_id "
                + "GROUP BY q.item_id ORDER BY 1", database: Self.name(database))
        #expect(answers == "1 1\n2 1", "one answer per item")
        #expect(try TickTests.calls(sim) == 3)
    }

    /// The database name at the end of a cluster URL.
    static func name(_ url: String) -> String {
        String(url.split(separator: "/").last?.split(separator: "?").first ?? "")
    }
}
