import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// The batch audit's evidence is the store's, not a process's (issue 44): two hosts answering one
/// run (processes with their own `OFFPEAK_HOST` on the workspace's store, the second helping the
/// first); a size is probed by one of them (its claim in the store, issue 46 item 9), the other
/// waiting for the verdict, and every audit counts in the one record; a later run on either host
/// finds the size proven and probes nothing.
@Suite(.ownThreads, .serialized) struct AuditHostsTests {
    static let model = "claude-sonnet-4-5"
    static let probe = ProbeKey(job: "classify", provider: "sim", model: model, size: 8)

    @Test func twoHostsProveOneSizeTogetherAndALaterRunTrustsIt() throws {
        // One call at a time, a tenth of a second each: the first host's round of 128 items is
        // still out when the second claims the other 32.
        let sim = try SimProcess(arguments: ["--latency-ms", "100"])
        let workspace = try BatchedRunTests.workspace(
            sim: sim, count: 160, batching: "{max_items: 8}", audit: "{rate: 0.0001, max_share: 1}")
        try workspace.oneCallInFlight()
        // The first host's `offpeak run` on a thread of its own; the second starts while it runs.
        let done = DispatchSemaphore(value: 0)
        let first = Box<CommandResult>()
        Thread.detachNewThread {
            first.value = try? workspace.offpeak(["run", "classify"], environment: ["OFFPEAK_HOST": "box-a"])
            done.signal()
        }
        // The second starts once the first has made its run and sent a call (so holds the run and
        // its first round): a fixed pause was too short for a loaded machine, and the second host
        // made the run itself.
        let deadline = Date() + 60
        while (try sim.stats()["calls"] as? Int ?? 0) < 1, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        let helped = try workspace.offpeak(["run", "classify"], environment: ["OFFPEAK_HOST": "box-b"])
        done.wait()
        let ran = try #require(first.value)
        #expect(ran.status == 0, "\(ran.stderr)")
        #expect(helped.status == 0, "\(helped.stderr)")
        #expect(
            helped.stdout.hasPrefix("classify [help]: job classify: run ")
                || helped.stdout.contains("this host helped"),
            "\(helped.stdout)")

        let store = try workspace.openStore()
        let rows = try store.audits.auditRows(job: "classify")
        #expect(Set(rows.map(\.host)) == ["box-a"], "the size was probed by the host that claimed it first")
        #expect(try store.audits.prober(of: Self.probe, now: Date()) == nil, "the claim given back")
        #expect(rows.allSatisfy { $0.agreed })
        let record = try #require(
            try store.audits.auditRecord(job: "classify", provider: "sim", model: Self.model))
        #expect(record.holds(size: 8, at: Date()))
        #expect(record.decisions.map(\.kind) == [.proven])
        // Every tail audit of either host is in the record's evidence.
        let tails = rows.filter { AuditEvidence.isTail(position: $0.position, size: $0.batchSize) }
        let kept = try #require(record.evidence(size: 8, at: Date())).tail
        #expect(Int(kept.audited.rounded()) == tails.count && tails.count >= 17)
        #expect(BatchedRunTests.answers(workspace).count == 160)

        // The next run, on the second host, trusts what both proved: no probe. (The same spec:
        // hosts that saw a job in the last hour must agree on it; `--refresh` asks every item again.)
        _ = try sim.request("POST", "/sim/reset")
        let later = try workspace.offpeak(
            ["run", "classify", "--refresh"], environment: ["OFFPEAK_HOST": "box-b"])
        #expect(later.status == 0, "\(later.stderr)")
        #expect((try sim.stats()["batched_calls"] as? NSNumber)?.intValue == 20)
        #expect(try store.audits.auditRows(job: "classify").count <= rows.count + 2, "sampled at most")
    }
}

/// A value one thread sets and another reads after a semaphore.
private final class Box<Value>: @unchecked Sendable {
    var value: Value?
}
