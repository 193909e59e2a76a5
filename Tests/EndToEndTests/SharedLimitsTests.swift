import Foundation
import OffpeakTestSupport
import Testing

/// Issue 23's shared limits and budgets, through the built binaries: three hosts run at once
/// against one store and one offpeak-sim, each its own job, and the limits set in `offpeak.yaml`
/// hold across them as they do for one host. On PostgreSQL each host is its own workspace folder
/// with its own `OFFPEAK_HOST` on the shared database; on SQLite, whose store is a workspace's
/// file, the three are processes in one workspace.
@Suite(.ownThreads, .serialized) struct SharedLimitsTests {
    static let jobs = ["a", "b", "c"]

    /// The three hosts' workspaces (one, three times, on SQLite), each with the jobs `a`, `b` and
    /// `c` of `items` items (one call each) and `config` in its `offpeak.yaml`.
    static func hosts(_ sim: SimProcess, items: Int, config: String, prices: String? = nil) throws
        -> [TemporaryWorkspace]
    {
        let first = try TemporaryWorkspace()
        let workspaces =
            TestStore.onPostgres ? [first, try TemporaryWorkspace(), try TemporaryWorkspace()] : [first]
        for workspace in workspaces {
            try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\n\(config)\n")
            if let prices { try workspace.write("prices.json", prices) }
            for job in jobs {
                let lines = (1...items).map { "  - \"Say something short about \(job) number \($0).\"" }
                try workspace.write(
                    "jobs/\(job).yaml",
                    "kind: prompt\ntier: fast\ntemplate: \"{{item}}\"\nbatching: off\nmax_tokens: 20\nitems:\n"
                        + lines.joined(separator: "\n") + "\n")
            }
        }
        return (0..<3).map { workspaces[$0 % workspaces.count] }
    }

    /// Runs job `a` on the first host, `b` on the second, `c` on the third, all at once; their ends.
    /// The timeout is generous: alone the slowest race takes a minute, but the suite runs beside it
    /// on a machine that may be busy.
    static func raceRuns(_ hosts: [TemporaryWorkspace]) throws -> [Spawned.Finished] {
        let timeout: TimeInterval = 300
        let store = try hosts[0].storeEnvironment()
        let racers = try zip(hosts, jobs).enumerated().map { index, host in
            try TickTests.start(
                ["run", host.1], in: host.0,
                environment: store.merging(["OFFPEAK_HOST": "host-\(index + 1)"]) { _, mine in mine })
        }
        return try racers.enumerated().map { index, racer in
            try #require(racer.wait(timeout: timeout), "host \(index + 1) did not finish")
        }
    }

    static func stat(_ sim: SimProcess, _ name: String) throws -> Int {
        try #require(try sim.stats()[name] as? Int, "the sim's \(name)")
    }

    /// Three hosts under a 50-rpm limit (the sim's, and `requests_per_minute: 50` in offpeak.yaml)
    /// send 60 calls: the first 50 in the first minute, the last 10 once it has passed, with
    /// under 5 % answered 429. Each host holding its own minute sent all 60 at once, and the sim
    /// answered 28 of 88 calls 429 (32 %, retries included).
    @Test func threeHostsUnderA50RPMLimitSeeUnder5PercentRateLimited() throws {
        let sim = try SimProcess(arguments: ["--rpm", "50", "--latency-ms", "50"])
        let hosts = try Self.hosts(
            sim, items: 20, config: "limits: {sim: {requests_per_minute: 50}}\nhttp: {max_retries: 8}")
        let started = Date()
        let ends = try Self.raceRuns(hosts)
        let took = Date().timeIntervalSince(started)
        for (end, job) in zip(ends, Self.jobs) {
            #expect(end.status == 0, "job \(job): \(end.stderr)")
            let lines = end.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(
                Array(lines.prefix(2)) == [
                    "job \(job): 20 of 20 items answered (20 now)", "outputs: out/\(job)/",
                ])
        }
        let calls = try Self.stat(sim, "calls")  // every call, those answered 429 too
        let limited = try Self.stat(sim, "rate_limited")
        let share = Double(limited) / Double(max(1, calls))
        print("3 hosts under 50 rpm: \(calls) calls, \(limited) answered 429 (\(share * 100) %), \(took) s")
        #expect(try Self.stat(sim, "ok_calls") == 60)
        #expect(share < 0.05, "\(limited) of \(calls) calls were answered 429")
        // The last ten waited for the first minute to pass.
        #expect(took >= 55, "60 calls under 50 per minute took \(took) s")
    }

    /// `in_flight: 2` holds across the three hosts: the sim never answers more than two at once.
    @Test func callsInFlightHoldAcrossHosts() throws {
        let sim = try SimProcess(arguments: ["--latency-ms", "150"])
        let hosts = try Self.hosts(sim, items: 6, config: "limits: {sim: {in_flight: 2}}")
        let ends = try Self.raceRuns(hosts)
        for (end, job) in zip(ends, Self.jobs) {
            #expect(end.status == 0, "job \(job): \(end.stderr)")
            #expect(end.stdout.hasPrefix("job \(job): 6 of 6 items answered (6 now)\noutputs: out/\(job)/\n"))
        }
        #expect(try Self.stat(sim, "ok_calls") == 18)
        #expect(try Self.stat(sim, "max_in_flight") == 2)
        // No slot is left held once the runs are over.
        let again = try Self.raceRuns(hosts)
        #expect(again.map(\.status) == [0, 0, 0])
    }

    /// A `per_day` workspace budget raced by three hosts is never overshot: what the sim billed
    /// stays within it, and the rest waits in the deferred queue saying why.
    @Test func threeHostsRacingADailyBudgetNeverSpendPastIt() throws {
        let sim = try SimProcess()
        let hosts = try Self.hosts(
            sim, items: 5,
            config: """
                prices: prices.json
                models: {sim: {fast: budget-model}}
                http: {max_retries: 0}
                budget: {per_day: 1.00}
                """,
            prices: WorkspaceBudgetTests.prices)
        let ends = try Self.raceRuns(hosts)
        for (index, end) in ends.enumerated() {
            #expect([0, 75].contains(end.status), "host \(index + 1): \(end.status) \(end.stderr)")
        }
        #expect(ends.contains { $0.status == 75 }, "15 items at about $0.15 each cannot all fit in $1.00")
        let spent = try WorkspaceBudgetTests.simDollars(sim)
        #expect(spent > 0.5 && spent <= 1.00, "the sim billed $\(spent) against a $1.00 daily budget")
        for (job, reason) in try WorkspaceBudgetTests.deferred(hosts[0]) {
            #expect(reason.hasPrefix("daily budget reached, resumes after 00:00 ($"), "\(job): \(reason)")
        }
    }
}
