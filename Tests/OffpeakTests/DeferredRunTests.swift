import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Jobs gated by their conditions (issue 5) and the run loop's stops between calls (issue 6):
/// real sysfs fixture trees, a real store, real HTTP to offpeak-sim.
@Suite(.ownThreads) struct DeferredRunTests {
    static func workspace(sim: SimProcess, documents: Int = 3, extra: String = "") throws
        -> TemporaryWorkspace
    {
        let workspace = try JobRunnerIntegrationTests.workspace(sim: sim, documents: documents)
        try workspace.write(
            "jobs/docs.yaml",
            """
            kind: summarize
            tier: balanced
            inputs: [docs/*.md]
            max_tokens: 200
            batching: off
            \(extra)
            """)
        return workspace
    }

    static func run(
        _ workspace: TemporaryWorkspace, sysfs: SwitchableSysfs, force: Bool = false,
        windowEnd: Date? = nil, stop: StopSignal? = nil, progress: (@Sendable (RunProgress) -> Void)? = nil,
        resuming: RunRecord? = nil
    ) throws -> RunOutcome {
        let context = try JobRunnerIntegrationTests.context(workspace)
        var options = JobRunner.Options(
            force: force, progress: progress, gate: context.gate(sysfsRoot: sysfs.root.path),
            windowEnd: windowEnd,
            stop: stop)
        options.resuming = resuming
        return try context.run(try context.loadJob("docs"), options: options)
    }

    static func store(_ workspace: TemporaryWorkspace) throws -> Store {
        try JobRunnerIntegrationTests.context(workspace).openStore()
    }

    static let heavy = "constraints: {power: ac, network: unmetered}"

    @Test func reasonsFollowTheConstraints() throws {
        let battery = MachineConditions.read(
            sysfsRoot: SwitchableSysfs.fixtures.appendingPathComponent("battery-wwan"))
        let home = MachineConditions.read(
            sysfsRoot: SwitchableSysfs.fixtures.appendingPathComponent("ac-wifi"))
        let offline = MachineConditions.read(
            sysfsRoot: SwitchableSysfs.fixtures.appendingPathComponent("ac-offline"))
        let heavy = JobSpec.Constraints(network: .unmetered, power: .ac, batteryNotLow: true)
        #expect(
            ConditionGate.failing(heavy, battery, needsNetwork: true) == [.externalPower, .unmeteredNetwork])
        #expect(ConditionGate.failing(heavy, home, needsNetwork: true).isEmpty)
        #expect(ConditionGate.failing(heavy, offline, needsNetwork: false) == [.offline])
        #expect(ConditionGate.failing(JobSpec.Constraints(), offline, needsNetwork: false).isEmpty)
        #expect(ConditionGate.failing(JobSpec.Constraints(), offline, needsNetwork: true) == [.offline])
        #expect(
            ConditionGate.failing(JobSpec.Constraints(network: .online), battery, needsNetwork: true).isEmpty)
        var low = battery
        low.power.batteryLow = true
        #expect(
            ConditionGate.failing(JobSpec.Constraints(batteryNotLow: true), low, needsNetwork: true) == [
                .batteryLow
            ])
        #expect(ConditionGate.isLocal("http://127.0.0.1:8089"))
        #expect(ConditionGate.isLocal("http://localhost:11434/v1"))
        #expect(!ConditionGate.isLocal("https://api.anthropic.com"))
    }

    @Test func backoffDoublesFromThirtySecondsUpToFiveHours() {
        #expect(RetryBackoff.delay(afterAttempt: 1) == 30)
        #expect(RetryBackoff.delay(afterAttempt: 2) == 60)
        #expect(RetryBackoff.delay(afterAttempt: 5) == 480)
        #expect(RetryBackoff.delay(afterAttempt: 10) == 15360)
        #expect(RetryBackoff.delay(afterAttempt: 11) == 5 * 3600)
        #expect(RetryBackoff.delay(afterAttempt: 1000) == 5 * 3600)
    }

    /// Issue 5's must-show, in process: deferred under battery + wwan with both reasons, released by
    /// the tick after the machine is on AC + WiFi.
    @Test func deferredOnBatteryAndWwanRunsAtTheNextTickOnACAndWiFi() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, extra: Self.heavy)
        let sysfs = try SwitchableSysfs("battery-wwan")
        let deferred = try Self.run(workspace, sysfs: sysfs)
        #expect(deferred.status == .temporaryFailure)
        #expect(deferred.run.state == .waiting)
        #expect(deferred.deferred == [.externalPower, .unmeteredNetwork])
        #expect((try sim.stats()["calls"] as? Int) == 0, "nothing was sent")
        let store = try Self.store(workspace)
        let queue = try QueueReport.make(store: store, conditions: sysfs.gateConditions())
        let entry = try #require(queue.deferred.first)
        #expect(entry.job == "docs")
        #expect(entry.reasons == ["waiting for external power", "waiting for an unmetered network"])
        #expect(queue.text.contains("waiting for external power; waiting for an unmetered network"))

        // A tick under the same conditions re-checks and keeps it deferred, since the first time.
        let context = try JobRunnerIntegrationTests.context(workspace)
        let gate = context.gate(sysfsRoot: sysfs.root.path)
        let still = try Tick(context: context).run(Tick.Options(gate: gate))
        #expect(still.status == ExitStatus.temporaryFailure.rawValue)
        #expect(try store.schedules.deferred().first?.deferredAt == entry.deferredAt)

        try sysfs.switchTo("ac-wifi")
        let tick = try Tick(context: context).run(Tick.Options(gate: gate))
        #expect(tick.status == 0, "\(tick.text)")
        #expect(tick.jobs.first?.state == "completed")
        #expect(try store.schedules.deferred().isEmpty, "released")
        #expect(try store.runs.run(id: deferred.run.id)?.itemsDone == 3, "the deferred run itself finished")
        #expect((try sim.stats()["calls"] as? Int) == 3)
    }

    @Test func forceRunsDespiteConditionsAndSaysSo() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, extra: Self.heavy)
        let sysfs = try SwitchableSysfs("battery-wwan")
        let outcome = try Self.run(workspace, sysfs: sysfs, force: true)
        #expect(outcome.status == .ok)
        #expect(outcome.run.forced)
        #expect(
            outcome.message.contains(
                "forced past: waiting for external power; waiting for an unmetered network"))
        #expect(try Self.store(workspace).schedules.deferred().isEmpty)
    }

    /// Unplugged part-way: the run stops at the next call boundary, checkpointed, not failed; the
    /// queue says why, and the next tick on AC finishes it without asking anything twice.
    @Test func conditionsFailingMidRunStopAtTheNextCallBoundary() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, documents: 5, extra: Self.heavy)
        // One call at a time: the boundary is then exactly after the second answer (with calls in
        // flight, those already sent are committed too: ConcurrentRunTests).
        try workspace.write(
            "offpeak.yaml",
            "provider: sim\nbase_url: \(sim.url)\nhttp: {connect_timeout: 2s, timeout: 5s, max_retries: 3}\n"
                + "limits: {sim: {in_flight: 1}}\n")
        let sysfs = try SwitchableSysfs("ac-wifi")
        let outcome = try Self.run(workspace, sysfs: sysfs) { progress in
            if progress.done == 2 { try? sysfs.switchTo("battery-wifi") }
        }
        #expect(outcome.status == .temporaryFailure)
        #expect(outcome.run.state == .waiting)
        #expect(outcome.run.itemsDone == 2)
        #expect(outcome.deferred == [.externalPower])
        #expect(outcome.message.contains("deferred part-way"))
        let store = try Self.store(workspace)
        #expect(try store.runs.checkpoint(runID: outcome.run.id)?.done == 2)
        #expect(try store.schedules.deferred().first?.reasonList == ["waiting for external power"])
        try sysfs.switchTo("ac-wifi")
        let context = try JobRunnerIntegrationTests.context(workspace)
        let tick = try Tick(context: context).run(
            Tick.Options(gate: context.gate(sysfsRoot: sysfs.root.path)))
        #expect(tick.status == 0, "\(tick.text)")
        #expect(try store.runs.run(id: outcome.run.id)?.itemsDone == 5)
        #expect((try sim.stats()["calls"] as? Int) == 5, "no item was asked twice")
    }

    @Test func downgradesOneTierOnBatteryAndTheLedgerSaysSo() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, documents: 2, extra: "downgrade_on_battery: true")
        let sysfs = try SwitchableSysfs("battery-wifi")
        let outcome = try Self.run(workspace, sysfs: sysfs)
        #expect(outcome.status == .ok)
        #expect(outcome.run.downgraded)
        #expect(outcome.run.tier == "fast")
        let store = try Self.store(workspace)
        #expect(try store.count("ledger") == 2)
        #expect(
            try store.count(
                "ledger", where: "downgraded AND tier = ? AND model = ?", ["fast", "claude-haiku-4-5"]) == 2)
        // On AC the same job runs at its own tier.
        try workspace.writeDocuments(3)
        try sysfs.switchTo("ac-wifi")
        let onAC = try Self.run(workspace, sysfs: sysfs)
        #expect(!onAC.run.downgraded)
        #expect(onAC.run.tier == "balanced")
    }

    /// Offline with a provider that is not on this machine: cached answers and outputs go on, calls
    /// wait with reason "offline", and the next tick online does the rest.
    @Test func offlineAnswersFromTheCacheAndWaitsForTheNetwork() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, documents: 2)
        let sysfs = try SwitchableSysfs("ac-wifi")
        let context = try JobRunnerIntegrationTests.context(workspace)
        let remote = RemoteLooking(
            inner: try context.makeProvider(), baseURL: "https://api.anthropic.example")
        func run() throws -> RunOutcome {
            let store = try context.openStore()
            let runner = JobRunner(
                workspace: context.workspace, config: context.config, store: store, provider: remote,
                prices: context.prices, logger: context.logger, host: "test-host")
            return try runner.run(
                try context.loadJob("docs"),
                options: JobRunner.Options(gate: context.gate(sysfsRoot: sysfs.root.path)))
        }
        #expect(try run().status == .ok)
        try workspace.writeDocuments(4)  // two more documents; the first two are cached
        try sysfs.switchTo("ac-offline")
        let offline = try run()
        #expect(offline.status == .temporaryFailure)
        #expect(offline.run.state == .waiting)
        #expect(offline.deferred == [.offline])
        #expect(offline.run.itemsDone == 2, "the cached answers went on")
        #expect(workspace.read("out/docs/docs-doc-001.md") != nil)
        #expect((try sim.stats()["calls"] as? Int) == 2)
        #expect(try context.openStore().schedules.deferred().first?.reasonList == ["offline"])
        try sysfs.switchTo("ac-wifi")
        let online = try run()
        #expect(online.status == .ok)
        #expect(online.run.itemsDone == 4)
        #expect((try sim.stats()["calls"] as? Int) == 4)
    }

    /// A failed item waits 30 s, then 60 s, …, and says so; it is not "failed" until its attempts run
    /// out.
    @Test func failedItemIsRetriedWithBackoffThenFails() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, documents: 1, extra: "max_attempts: 2")
        let sysfs = try SwitchableSysfs("ac-wifi")
        try sim.queueFaults(["400"])
        let before = Date()
        let first = try Self.run(workspace, sysfs: sysfs)
        #expect(first.status == .temporaryFailure)
        #expect(first.run.state == .interrupted)
        #expect(first.message.contains("retrying at "))
        #expect(first.message.contains("(attempt 2 of 2)"))
        let store = try Self.store(workspace)
        let request = try #require(try store.runs.requests(runID: first.run.id).first)
        #expect(request.state == .retrying)
        let wait = try #require(request.nextAttemptAt).timeIntervalSince(before)
        #expect(wait >= 29 && wait < 40)
        #expect(try QueueReport.make(store: store, conditions: nil).retrying.count == 1)
        // Before its time, a run sends nothing.
        let early = try Self.run(workspace, sysfs: sysfs)
        #expect(early.status == .temporaryFailure)
        #expect((try sim.stats()["calls"] as? Int) == 1)
        // Its time comes; it fails again and has no attempts left.
        try Self.makeDue(store)
        try sim.queueFaults(["400"])
        let last = try Self.run(workspace, sysfs: sysfs)
        #expect(last.run.state == .failed)
        #expect(last.message.contains("gave up after 2 attempts"))
    }

    @Test func retriedItemIsAnsweredWhenItsTimeComes() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, documents: 2)
        let sysfs = try SwitchableSysfs("ac-wifi")
        try sim.queueFaults(["400"])
        let first = try Self.run(workspace, sysfs: sysfs)
        #expect(first.run.itemsDone == 1, "the other item went on")
        try Self.makeDue(try Self.store(workspace))
        let second = try Self.run(workspace, sysfs: sysfs)
        #expect(second.status == .ok)
        #expect(second.run.itemsDone == 2)
    }

    static func makeDue(_ store: Store) throws {
        try store.execute("UPDATE requests SET next_attempt_at = ? WHERE state = 'retrying'", [Date() - 1])
    }

    /// A call that is not expected to fit what is left of the window does not start: the run
    /// checkpoints and the next pass resumes.
    @Test func windowStopsBeforeACallThatWouldNotFit() throws {
        // Six calls of 600 ms cannot fit a window of 2.5 s, which still holds the first call
        // after a pass's start-up (opening a PostgreSQL store under a loaded CI machine took
        // more than a 1 s window once).
        let sim = try SimProcess(arguments: ["--latency-ms", "600"])
        let workspace = try Self.workspace(sim: sim, documents: 6)
        try workspace.oneCallInFlight()  // a sequential premise (see `oneCallInFlight`)
        let sysfs = try SwitchableSysfs("ac-wifi")
        let outcome = try Self.run(workspace, sysfs: sysfs, windowEnd: Date() + 2.5)
        #expect(outcome.status == .temporaryFailure)
        #expect(outcome.run.state == .interrupted)
        #expect(outcome.message.contains("window ends"))
        #expect(outcome.run.itemsDone >= 1 && outcome.run.itemsDone < 6)
        let latency = try #require(try Self.store(workspace).ledger.latency(model: "claude-sonnet-4-5"))
        #expect(latency.samples == outcome.run.itemsDone)
        #expect(latency.msPerCall >= 250)
        var done = outcome.run.itemsDone
        var passes = 1
        while done < 6 && passes < 20 {
            done = try Self.run(workspace, sysfs: sysfs, windowEnd: Date() + 2.5).run.itemsDone
            passes += 1
        }
        #expect(done == 6)
        #expect(passes >= 2)
        #expect((try sim.stats()["calls"] as? Int) == 6, "no call was made twice")
    }

    /// A job's own `window` ends each of its passes, `offpeak run` included, where no tick gives one.
    @Test func aJobsOwnWindowEndsEachPass() throws {
        let sim = try SimProcess(arguments: ["--latency-ms", "300"])
        let workspace = try Self.workspace(sim: sim, documents: 6, extra: "window: 1s")
        try workspace.oneCallInFlight()  // a sequential premise (see `oneCallInFlight`)
        let sysfs = try SwitchableSysfs("ac-wifi")
        let outcome = try Self.run(workspace, sysfs: sysfs)
        #expect(outcome.status == .temporaryFailure)
        #expect(outcome.run.state == .interrupted)
        #expect(outcome.message.contains("window ends"), "\(outcome.message)")
        #expect(outcome.run.itemsDone >= 1 && outcome.run.itemsDone < 6)
        #expect(outcome.callsMade == outcome.run.itemsDone)
    }

    @Test func stopSignalEndsTheRunAtTheNextCallAsInterrupted() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, documents: 4)
        try workspace.oneCallInFlight()  // a sequential premise (see `oneCallInFlight`)
        let sysfs = try SwitchableSysfs("ac-wifi")
        let stop = StopSignal()
        let outcome = try Self.run(workspace, sysfs: sysfs, stop: stop) { progress in
            if progress.done == 1 { stop.request("SIGTERM", grace: 10) }
        }
        #expect(outcome.status == .temporaryFailure)
        #expect(outcome.run.state == .interrupted)
        #expect(outcome.message.contains("stopped by SIGTERM"))
        #expect(outcome.run.itemsDone == 1)
        let rest = try Self.run(workspace, sysfs: sysfs)
        #expect(rest.status == .ok)
        #expect((try sim.stats()["calls"] as? Int) == 4)
    }

    /// A checkpoint older than `checkpoint_max_age` is not resumed: a new run starts, and the cache
    /// answers what the old one had done. So it goes also for a tick, which picks the job only to
    /// resume its run (`Options.resuming`).
    @Test func staleCheckpointRestartsTheRunCheaply() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(
            sim: sim, documents: 3, extra: "budget: {max_calls: 2}\ncheckpoint_max_age: 1h")
        let sysfs = try SwitchableSysfs("ac-wifi")
        let first = try Self.run(workspace, sysfs: sysfs)
        #expect(first.run.state == .interrupted)
        let store = try Self.store(workspace)
        try store.execute("UPDATE checkpoints SET updated_at = ?", [Date() - 7200])
        try workspace.write(
            "jobs/docs.yaml",
            "kind: summarize\ntier: balanced\ninputs: [docs/*.md]\nmax_tokens: 200\nbatching: off\n")
        let second = try Self.run(workspace, sysfs: sysfs, resuming: first.run)
        #expect(second.status == .ok)
        #expect(second.run.id != first.run.id)
        #expect(try store.runs.run(id: first.run.id)?.state == .failed)
        #expect(try store.runs.run(id: first.run.id)?.reason?.contains("checkpoint_max_age") == true)
        #expect(second.run.itemsCached == 2, "the restart took the old run's answers from the cache")
        #expect((try sim.stats()["calls"] as? Int) == 3)
    }
}

extension SwitchableSysfs {
    func gateConditions() -> MachineConditions { MachineConditions.read(sysfsRoot: root) }
}

/// The sim, seen as a provider somewhere on the internet: only its address differs, so the run
/// loop treats it as needing the network. Calls still go over real HTTP to offpeak-sim.
struct RemoteLooking: CompletionProvider {
    let inner: any CompletionProvider
    let baseURL: String
    var kind: ProviderKind { inner.kind }
    func complete(_ request: CompletionRequest) throws -> CompletionResponse { try inner.complete(request) }
}
