import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Issue 21, item 2: where the batch lane fetches a batch's results, over real HTTP against
/// `offpeak-sim`. A `results_url` given as a path (as a third-party mock of Message Batches under
/// `/anthropic` answers it) is resolved against the base URL; one on another host is asked of the
/// base URL instead, never fetched with the key; a results fetch that keeps failing for a reason
/// that is not transient is shown, with why, by `status`, `batches` and `queue`, and still asked
/// about, so the items are collected once it is fixed. Serialized, as `BatchLaneTests`.
@Suite(.ownThreads, .serialized) struct BatchResultsURLTests {
    /// The job `classify` of `count` tickets in the batch lane, through the sim at `base`.
    static func workspace(base: String, count: Int = 12) throws -> TemporaryWorkspace {
        try BatchLaneTests.workspace(base: base, count: count)
    }

    static func store(_ workspace: TemporaryWorkspace) throws -> Store { try BatchLaneTests.store(workspace) }

    /// Submits the job's batch and waits past the sim's batch delay and the first poll.
    /// Runs the job on host `laptop`, which sends its batch, and lets the sim finish it.
    static func submit(_ workspace: TemporaryWorkspace) throws {
        let run = try workspace.offpeak(["run", "classify"], environment: ["OFFPEAK_HOST": "laptop"])
        #expect(run.status == 75, "\(run.stderr)")
        Thread.sleep(forTimeInterval: 2.5)
    }

    static let collected = "classify [resume]: job classify: 12 of 12 items answered (12 now)\n"

    /// The mock of the issue: the API under `/anthropic`, `results_url` a path that includes it.
    /// Before the fix, libcurl was handed the path ("curl error 3") at every tick, for ever.
    @Test(arguments: ["/anthropic", ""])
    func aResultsURLGivenAsAPathIsResolvedAgainstTheBaseURLAndCollected(prefix: String) throws {
        var arguments = ["--batch-delay", "1", "--relative-results-url"]
        if !prefix.isEmpty { arguments += ["--path-prefix", prefix] }
        let sim = try SimProcess(arguments: arguments)
        let workspace = try Self.workspace(base: sim.url + prefix)
        try Self.submit(workspace)
        let tick = try workspace.offpeak(["tick"])
        #expect(tick.status == 0, "\(tick.stderr)")
        #expect(tick.stdout == Self.collected)
        let store = try Self.store(workspace)
        #expect(try store.batches.openBatches().isEmpty)
        #expect(workspace.snapshot("out/classify").filter { $0.key != "index.json" }.count == 12)
    }

    /// The provider names another host (the real API behind a proxy): nothing is asked of it (here
    /// port 1, where nothing listens, so a call there could not succeed); the base URL is asked
    /// at the documented endpoint, and answers.
    @Test func aResultsURLOnAnotherHostIsAskedOfTheBaseURLNeverOfThatHost() throws {
        let sim = try SimProcess(arguments: [
            "--batch-delay", "1", "--path-prefix", "/anthropic", "--results-origin", "http://127.0.0.1:1",
        ])
        let workspace = try Self.workspace(base: sim.url + "/anthropic")
        try Self.submit(workspace)
        let tick = try workspace.offpeak(["tick"])
        #expect(tick.status == 0, "\(tick.stderr)")
        #expect(tick.stdout == Self.collected)
    }

    static let sysfs = SwitchableSysfs.fixtures.appendingPathComponent("ac-wifi").path

    /// Results that answer 404 poll after poll: after three polls in a row the run's reason, `status`,
    /// `batches` and `queue` say why, in full where there is room; every tick still asks, and
    /// once the results can be fetched they are collected and the failure is forgotten.
    @Test func resultsThatKeepFailingAreShownWithWhyAndCollectedOnceTheyCanBe() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "1", "--results-status", "404"])
        let workspace = try Self.workspace(base: sim.url)
        try Self.submit(workspace)
        let waiting =
            "classify [resume]: job classify: 0 of 12 items answered (0 now); 12 items in a provider batch "
            + "(collect with the next tick, or `offpeak run --wait`)\n"
        let store = try Self.store(workspace)
        for tries in 1...2 {
            let tick = try workspace.offpeak(["tick"])
            #expect(tick.status == 75 && tick.stdout == waiting, "\(tick.stderr)")
            let batch = try #require(try store.batches.openBatches().first)
            #expect(batch.pollFailures == tries && batch.state == .ended)
            // Not shown yet: one failure may be a bad minute of the server's.
            let queue = try workspace.offpeak(["queue", "--sysfs-root", Self.sysfs])
            #expect(queue.stdout == "now: on AC (54 %); online, unmetered (wlan0)\ndeferred: nothing\n")
            Thread.sleep(forTimeInterval: 2.2)
        }
        let batch = try #require(try store.batches.openBatches().first)
        let run = try #require(try store.runs.run(id: batch.runId))
        let remote = try #require(batch.remoteId)
        let reason =
            "provider answered HTTP 404 to \(sim.url)/v1/messages/batches/\(remote)/results: "
            + "offpeak-sim refuses results downloads (--results-status 404)"
        let why = "12 items in a provider batch whose polls failed 3 times in a row: " + reason
        let third = try workspace.offpeak(["tick"])
        #expect(third.status == 75, "\(third.stderr)")
        #expect(
            third.stdout
                == "classify [resume]: job classify: 0 of 12 items answered (0 now); \(why); each tick asks again\n"
        )
        #expect(third.stderr.contains("its results could not be fetched (3 times in a row): \(reason)"))

        let submitted = BatchLine.time(batch.submittedAt), expires = BatchLine.time(batch.expiresAt)
        // The RUN column is as wide as the run id, and two spaces.
        let runColumn = "RUN".padding(toLength: run.id.count + 2, withPad: " ", startingAt: 0)
        let failing = """

            provider batches not collected, their polls failing (asked again at every poll; nothing is dropped):
            BATCH           \(runColumn)PROVIDER ID                           FAILED   WHY
            \(batch.id)  \(run.id)  \(remote)  3 times  \(reason)

            """
        let status = try workspace.offpeak(["status"])
        #expect(
            status.stdout == """
                spend today: $0.00 in 0 calls (naive $0.00)
                \(runColumn)STATE    ITEMS               CALLS  COST   WHY
                \(run.id)  waiting  0/12 (12 in batch)  0      $0.00  \(why.prefix(159))…

                provider batches out:
                \(runColumn)BATCH           PROVIDER ID                           PROVIDER STATE  PROGRESS       SUBMITTED         EXPIRES
                \(run.id)  \(batch.id)  \(remote)  ended           12 of 12 done  \(submitted)  \(expires)

                """ + failing)
        let batches = try workspace.offpeak(["batches"])
        #expect(
            batches.stdout == """
                BATCH           JOB       \(runColumn)HOST    PROVIDER  PROVIDER ID                           STATE  PROVIDER STATE  ITEMS  REQUESTS  PROGRESS       WORST      PREPARED          SUBMITTED         EXPIRES
                \(batch.id)  classify  \(run.id)  laptop  sim       \(remote)  ended  ended           12     12        12 of 12 done  \(Money.dollars(batch.worstDollars))  \(BatchLine.time(batch.preparedAt))  \(submitted)  \(expires)

                """ + failing)
        let queue = try workspace.offpeak(["queue", "--sysfs-root", Self.sysfs])
        #expect(queue.stdout == "now: on AC (54 %); online, unmetered (wlan0)\ndeferred: nothing\n" + failing)
        let json = try #require(
            try JSONSerialization.jsonObject(
                with: Data(try workspace.offpeak(["batches", "--json"]).stdout.utf8))
                as? [[String: Any]])
        #expect(json.first?["poll_failures"] as? Int == 3 && json.first?["poll_error"] as? String == reason)

        // Fixed at the provider: the next tick collects, and nothing is shown any more.
        try sim.refuseResults(nil)
        Thread.sleep(forTimeInterval: 2.2)
        let tick = try workspace.offpeak(["tick"])
        #expect(tick.status == 0 && tick.stdout == Self.collected, "\(tick.stderr)")
        let collected = try #require(try store.batches.batch(id: batch.id))
        #expect(collected.state == .collected && collected.pollFailures == 0 && collected.pollError == nil)
        #expect(try workspace.offpeak(["batches"]).stdout == "no provider batches out\n")
    }

    /// `run --wait` stays for batches being answered, not for one whose polls keep failing: it ends
    /// once the batch is shown as failing, saying why, and the ticks go on asking.
    @Test func runWaitEndsOnceItsBatchKeepsFailingAndSaysWhy() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "0", "--results-status", "403"])
        let workspace = try Self.workspace(base: sim.url)
        let run = try workspace.offpeak(["run", "classify", "--wait"], timeout: 60)
        let batch = try #require(try Self.store(workspace).batches.openBatches().first)
        let remote = try #require(batch.remoteId)
        #expect(run.status == 75, "\(run.stderr)")
        #expect(
            run.stdout.split(separator: "\n").first.map(String.init)
                == "job classify: 0 of 12 items answered (0 now); 12 items in a provider batch whose polls failed "
                + "3 times in a row: provider answered HTTP 403 to \(sim.url)/v1/messages/batches/\(remote)/results: "
                + "offpeak-sim refuses results downloads (--results-status 403); each tick asks again")
        #expect(batch.pollFailures == 3 && batch.state == .ended)
    }
}
