import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// `RunVerdict`: where a pass leaves its run.
@Suite(.ownThreads) struct RunVerdictTests {
    static func facts(
        done: Int = 3, total: Int = 3, failed: Int = 0, retry: (String?, Int)? = nil,
        waiting: (String?, Int)? = nil
    ) -> RunVerdict.Facts {
        RunVerdict.Facts(
            job: "j", itemsDone: done, itemsTotal: total, itemsFailed: failed, answeredNow: 2,
            nextRetry: retry,
            firstWaiting: waiting, firstFailure: failed > 0 ? "provider answered HTTP 400: bad" : nil)
    }

    @Test func everythingAnsweredCompletes() {
        let verdict = RunVerdict.decide(Self.facts(), stop: nil)
        #expect(
            verdict
                == RunVerdict(
                    state: .completed, reason: nil, status: .ok,
                    message: "job j: 3 of 3 items answered (2 now)"))
    }

    @Test func aStopDecidesAndSaysHowToGoOn() {
        let stop = RunStop(state: .interrupted, reason: "stopped by SIGTERM", status: .temporaryFailure)
        #expect(
            RunVerdict.decide(Self.facts(done: 1), stop: stop).message
                == "job j: stopped by SIGTERM; 1 of 3 items answered (2 now); run it again to do the rest")
        let deferred = RunStop(
            state: .waiting, reason: "waiting for external power", status: .temporaryFailure,
            deferred: [.externalPower])
        let waiting = RunVerdict.decide(Self.facts(done: 1), stop: deferred)
        #expect(waiting.state == .waiting && waiting.deferred == [.externalPower])
        #expect(
            waiting.message
                == "job j deferred part-way (waiting for external power); 1 of 3 items answered (2 now); "
                + "`offpeak tick` goes on once they hold")
    }

    @Test func retriesThenWaitsThenFailuresDecideInThatOrder() {
        let retrying = RunVerdict.decide(
            Self.facts(done: 1, failed: 1, retry: ("bad; retrying at T", 1), waiting: ("source", 1)),
            stop: nil)
        #expect(
            retrying.state == .interrupted && retrying.reason == "1 item retrying; next bad; retrying at T")
        let waiting = RunVerdict.decide(
            Self.facts(done: 1, failed: 1, waiting: ("source not fetched", 2)), stop: nil)
        #expect(waiting.state == .waiting && waiting.reason == "2 items wait: source not fetched")
        let failed = RunVerdict.decide(Self.facts(done: 2, failed: 1), stop: nil)
        #expect(failed.state == .failed && failed.status == .unavailable)
        #expect(
            failed.message
                == "job j: 2 of 3 items answered (2 now), 1 failed (first: provider answered HTTP 400: bad)")
    }

    @Test func noticesAndForcedConditionsComeFirst() {
        var facts = Self.facts(done: 1, total: 1)
        facts.notices = [
            "jobs/j.yaml changed while its run was unfinished: dropped 1 unanswered item it no longer lists (x)"
        ]
        facts.forcedPast = [.externalPower]
        #expect(
            RunVerdict.decide(facts, stop: nil).message
                == "jobs/j.yaml changed while its run was unfinished: dropped 1 unanswered item it no longer lists (x); "
                + "forced past: waiting for external power (--force); job j: 1 of 1 item answered (2 now)")
    }
}
