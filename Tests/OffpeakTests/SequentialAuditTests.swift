import Foundation
import Testing

@testable import Offpeak

/// The audit's decision as pure parts: the sequential test on synthetic agreement streams (a clear
/// pass, a clear fail, an unclear case that samples more), tail-first sampling, and what an audit
/// record decides from what it is fed (`AuditRecord`, `AuditEvidence`).
struct SequentialAuditTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let test = SequentialTest(agree: 0.95)

    /// Feeds `stream` (true: agreed) to the test from no evidence until it decides.
    /// - Returns: the verdict and how many answers it took; `.undecided` and the stream's length
    ///   when it never did.
    func decide(_ stream: [Bool], test: SequentialTest? = nil) -> (SequentialTest.Verdict, Int) {
        let test = test ?? self.test
        var evidence = 0.0
        for (index, agreed) in stream.enumerated() {
            evidence = test.next(evidence, agreed: agreed)
            let verdict = test.verdict(evidence)
            if verdict != .undecided { return (verdict, index + 1) }
        }
        return (.undecided, stream.count)
    }

    /// `count` answers of which every `every`-th disagrees, the first of them.
    func stream(_ count: Int, disagreeEvery every: Int) -> [Bool] {
        (1...count).map { $0 % every != 1 }
    }

    @Test func aTargetOf95PercentTellsNinetySevenAndAHalfFromEightyFive() {
        #expect(abs(test.good - 0.025) < 1e-12 && abs(test.bad - 0.15) < 1e-12)
        #expect(abs(test.failBound - log(9)) < 1e-12 && abs(test.proveBound + log(9)) < 1e-12)
        #expect(test.agreementsToProve(from: 0) == 17)
        let strict = SequentialTest(agree: 0.99)
        #expect(abs(strict.good - 0.005) < 1e-12 && abs(strict.bad - 0.03) < 1e-12)
        #expect(strict.agreementsToProve(from: 0) == 87, "a stricter target costs more audits")
        let loose = SequentialTest(agree: 0.5)
        #expect(loose.good == 0.25 && loose.bad == 0.75, "at most halfway from the tolerance to 1")
    }

    @Test func aClearPassIsSettledAfterSeventeenAgreements() {
        #expect(decide(Array(repeating: true, count: 100)) == (.holds, 17))
        #expect(decide(Array(repeating: true, count: 16)) == (.undecided, 16))
        // A watched model (its answers changed with the prompt's size before) proves with 1 % risk.
        #expect(
            decide(Array(repeating: true, count: 100), test: SequentialTest(agree: 0.95, watched: true)) == (
                .holds, 33
            ))
    }

    @Test func aClearFailIsSettledAfterTwoDisagreementsClose() {
        #expect(decide([false, false]) == (.fails, 2))
        #expect(decide([true, false, true, false]) == (.fails, 4))
        // One in four disagreeing (a tail at 25 %): failed at the second disagreement.
        #expect(decide(stream(100, disagreeEvery: 4)) == (.fails, 5))
        // One in ten (10 %): at the second disagreement too.
        #expect(decide(stream(100, disagreeEvery: 10)) == (.fails, 11))
        // One disagreement alone fails nothing.
        #expect(decide([false] + Array(repeating: true, count: 10)) == (.undecided, 11))
    }

    @Test func anUnclearCaseSamplesMoreBeforeItIsSettled() {
        // One in 15 disagreeing (6.7 %, between 2.5 % and 15 %): settled only after 270 answers,
        // sixteen times a clear pass; so close to the target either way would have been allowed.
        #expect(decide(stream(400, disagreeEvery: 15)) == (.holds, 270))
        // One in 20 (5 %, the target itself): 59 answers.
        #expect(decide(stream(400, disagreeEvery: 20)) == (.holds, 59))
        // One in 12 (8.3 %): it leans the other way, and fails after 25.
        #expect(decide(stream(400, disagreeEvery: 12)) == (.fails, 25))
    }

    @Test func theFloorLetsAProvenSizeFailAsSoonAsANewOne() {
        var evidence = 0.0
        for _ in 0..<500 { evidence = test.next(evidence, agreed: true) }
        #expect(evidence == test.proveBound, "500 agreements count no more than 17")
        for _ in 0..<3 { evidence = test.next(evidence, agreed: false) }
        #expect(test.verdict(evidence) == .fails)
        #expect(test.agreementsToProve(from: test.proveBound) == 0)
        #expect(test.agreementsToProve(from: test.proveBound / 2) == 9)
    }

    @Test func probesAuditTheTailAndSomeOfTheHead() {
        #expect(AuditSampling.tail(size: 16) == [12, 13, 14, 15])
        #expect(AuditSampling.tail(size: 8) == [6, 7])
        #expect(AuditSampling.tail(size: 5) == [4])
        #expect(AuditSampling.tail(size: 2) == [1])
        #expect(AuditSampling.probePlaces(size: 8, head: false) == [6, 7])
        #expect(AuditSampling.probePlaces(size: 8, head: true) == [0, 6, 7])
        #expect(AuditSampling.probePlaces(size: 2, head: true) == [0, 1])
        #expect(AuditSampling.probePlaces(size: 1, head: true) == [0])
        // A round's last probe audits no more of its tail than the test still needs, last first.
        #expect(AuditSampling.probePlaces(size: 16, head: false, most: 1) == [15])
        #expect(AuditSampling.probePlaces(size: 16, head: true, most: 3) == [0, 13, 14, 15])
        #expect(AuditSampling.roundAudits(agreements: 17, whole: false) == 9)
        #expect(AuditSampling.roundAudits(agreements: 17, whole: true) == 17)
        // Half of what the test still needs if all agree, a tail's worth a probe; a provider
        // batch's round carries all of it.
        #expect(AuditSampling.probes(size: 8, agreements: 17) == 5)
        #expect(AuditSampling.probes(size: 8, agreements: 17, whole: true) == 9)
        #expect(AuditSampling.probes(size: 16, agreements: 17) == 3)
        #expect(AuditSampling.probes(size: 4, agreements: 33, whole: true) == 16, "at most 16")
        #expect(AuditSampling.probes(size: 8, agreements: 0) == 1)
    }

    @Test func aSampledPromptIsAuditedAtItsLastPlace() {
        let drawn = (0..<2_000).map {
            AuditSampling.sampledPlaces(size: 8, firstRequestID: "r/\($0)", rate: 0.02)
        }
        .filter { !$0.isEmpty }
        #expect(drawn.allSatisfy { $0.last == 7 })
        #expect(drawn.contains([0, 7]) && drawn.contains([7]), "some with the head, to compare")
        // About one in four with the head.
        let heads = drawn.filter { $0 == [0, 7] }.count
        #expect(Double(heads) / Double(drawn.count) > 0.15 && Double(heads) / Double(drawn.count) < 0.35)
    }

    /// A record fed `count` audits of `size` at `position`.
    func feed(
        _ record: inout AuditRecord, size: Int, position: Int, agreed: [Bool], at: Date? = nil,
        target: Double = 0.95, shape: String = "s"
    ) -> [AuditRecord.Decision] {
        agreed.compactMap {
            record.record(
                size: size, position: position, agreed: $0, shape: shape, target: target, at: at ?? start)
        }
    }

    @Test func onlyTheTailMovesTheTestAndTheHeadIsKeptToCompare() {
        var record = AuditRecord(job: "j", provider: "sim", model: "m", at: start)
        let head = feed(&record, size: 8, position: 1, agreed: Array(repeating: true, count: 40))
        #expect(head.isEmpty, "forty agreeing heads prove nothing")
        #expect(!record.holds(size: 8, at: start))
        #expect(record.evidence(size: 8, at: start)?.evidence == 0)
        let head40 = record.evidence(size: 8, at: start).map { [$0.head.audited, $0.head.agreed] }
        #expect(head40 == [40, 40])
        let tail = feed(&record, size: 8, position: 7, agreed: Array(repeating: true, count: 17))
        #expect(tail.map(\.kind) == [.proven])
        #expect(
            tail.first == AuditRecord.Decision(at: start, kind: .proven, size: 8, audited: 17, agreed: 17))
        #expect(record.holds(size: 8, at: start) && record.holds(size: 5, at: start), "smaller sizes with it")
        #expect(!record.holds(size: 9, at: start))
        #expect(record.standing(at: start) == .holds(size: 8))
        #expect(record.evidence(size: 8, at: start)?.places.map(\.position) == [1, 7])
    }

    @Test func aFailingTailHalvesTheSizeAndWatchesTheModel() {
        var record = AuditRecord(job: "j", provider: "sim", model: "m", at: start)
        #expect(feed(&record, size: 16, position: 16, agreed: [true, false, true]).isEmpty)
        #expect(record.standing(at: start) == .belowTarget(size: 16, audited: 3, agreed: 2))
        let decisions = feed(&record, size: 16, position: 14, agreed: [false])
        #expect(
            decisions == [
                AuditRecord.Decision(at: start, kind: .halved, size: 16, audited: 4, agreed: 2, cap: 8)
            ])
        #expect(record.itemLimit(at: start) == 8 && record.sizes.isEmpty)
        #expect(record.probeAt == start.addingTimeInterval(AuditRecord.firstPause))
        // An answer of a prompt of 16 sent before the cap changes nothing.
        #expect(feed(&record, size: 16, position: 16, agreed: [false]).isEmpty && record.sizes.isEmpty)
        // Watched now: 8 is proven after 33 agreeing tails, not 17.
        #expect(record.watched)
        #expect(record.agreementsToProve(size: 8, at: start) == 33)
        #expect(feed(&record, size: 8, position: 8, agreed: Array(repeating: true, count: 32)).isEmpty)
        #expect(record.standing(at: start) == .unproven(size: 8, agreements: 1))
        #expect(feed(&record, size: 8, position: 7, agreed: [true]).map(\.kind) == [.proven])
        // Two prompts of 2 disagreeing at their tail alone fail 2: the items go alone.
        var small = AuditRecord(job: "j", provider: "sim", model: "m", at: start)
        #expect(feed(&small, size: 2, position: 2, agreed: [false, false]).map(\.kind) == [.off])
        #expect(small.itemLimit(at: start) == 1)
    }

    @Test func aSizeThatHeldIsDoubtedWhenItsEvidenceTurns() {
        var record = AuditRecord(job: "j", provider: "sim", model: "m", at: start)
        _ = feed(&record, size: 4, position: 4, agreed: Array(repeating: true, count: 30))
        #expect(record.holds(size: 4, at: start))
        // One disagreement at the floor is absorbed; a second close by doubts the size.
        #expect(feed(&record, size: 4, position: 4, agreed: [false]).isEmpty)
        #expect(record.holds(size: 4, at: start))
        let doubted = feed(&record, size: 4, position: 4, agreed: [false])
        #expect(doubted.map(\.kind) == [.doubted])
        #expect(!record.holds(size: 4, at: start))
        #expect(record.standing(at: start) == .belowTarget(size: 4, audited: 32, agreed: 30))
        // A third fails it.
        #expect(feed(&record, size: 4, position: 4, agreed: [false]).map(\.kind) == [.halved])
    }

    @Test func evidenceFadesAndASizeNotAuditedForTwoWeeksIsProvenAgain() {
        var record = AuditRecord(job: "j", provider: "sim", model: "m", at: start)
        _ = feed(&record, size: 8, position: 8, agreed: Array(repeating: true, count: 17))
        let week = start.addingTimeInterval(AuditEvidence.halfLife)
        let faded = record.evidence(size: 8, at: week)
        #expect(abs((faded?.evidence ?? 0) - test.proveBound / 2) < 1e-9, "halved in a week")
        #expect(abs((faded?.tail.audited ?? 0) - 8.5) < 1e-9)
        #expect(record.holds(size: 8, at: week), "still holds within two weeks")
        #expect(record.agreementsToProve(size: 8, at: week) == 0)
        let later = start.addingTimeInterval(AuditEvidence.maxAge)
        #expect(!record.holds(size: 8, at: later))
        #expect(
            record.agreementsToProve(size: 8, at: later) == 13, "proven again from a quarter of its proof")
        // A disagreement a week on weighs as much as ever against evidence that has faded.
        #expect(feed(&record, size: 8, position: 8, agreed: [false], at: week).map(\.kind) == [.doubted])
    }

    @Test func anotherPromptShapeOrTargetStartsTheAuditOver() {
        var record = AuditRecord(job: "j", provider: "sim", model: "m", at: start)
        _ = feed(&record, size: 8, position: 8, agreed: [false, false])
        #expect(record.itemLimit(at: start) == 4 && record.matches(shape: "s", target: 0.95))
        #expect(!record.matches(shape: "t", target: 0.95) && !record.matches(shape: "s", target: 0.9))
        _ = feed(&record, size: 8, position: 8, agreed: [true], shape: "t")
        #expect(record.shape == "t" && record.itemLimit(at: start) == nil && record.pauses == 0)
        #expect(record.sizes.map(\.size) == [8])
        #expect(record.decisions.map(\.kind) == [.halved], "kept as history")
        _ = feed(&record, size: 8, position: 8, agreed: [true], target: 0.9, shape: "t")
        let tail = record.evidence(size: 8, at: start).map { [$0.tail.audited, $0.tail.agreed] }
        #expect(record.target == 0.9 && tail == [1, 1])
    }

    @Test func afterThePauseTheFailedSizeIsProbedAgainAndTheCapGoesWhenItHolds() {
        var record = AuditRecord(job: "j", provider: "sim", model: "m", at: start)
        _ = feed(&record, size: 4, position: 4, agreed: [false, false])
        #expect(record.itemLimit(at: start) == 2)
        let over = start.addingTimeInterval(AuditRecord.firstPause)
        #expect(record.itemLimit(at: over) == 4, "the pause over, the failed size is tried again")
        #expect(feed(&record, size: 4, position: 4, agreed: [false], at: over).isEmpty)
        #expect(record.decisions.last?.kind == .probe)
        _ = feed(&record, size: 4, position: 4, agreed: [false], at: over)
        #expect(record.itemLimit(at: over) == 2)
        #expect(
            record.probeAt == over.addingTimeInterval(2 * AuditRecord.firstPause),
            "a failed probe doubles the pause")
        let later = over.addingTimeInterval(2 * AuditRecord.firstPause)
        let held = feed(&record, size: 4, position: 4, agreed: Array(repeating: true, count: 33), at: later)
        #expect(held.map(\.kind) == [.proven], "after 33 (watched: a cap stood)")
        #expect(record.decisions.suffix(2).map(\.kind) == [.probe, .proven])
        #expect(record.itemLimit(at: later) == nil && record.failedSize == nil && record.pauses == 0)
        #expect(!record.watched)
    }

    @Test func backingOffForAProvingShareSpentHalvesTheSize() {
        var record = AuditRecord(job: "j", provider: "sim", model: "m", at: start)
        _ = feed(&record, size: 8, position: 8, agreed: [true, false, true])
        record.adopt(shape: "s", target: 0.95)
        let decision = record.backOff(size: 8, kind: .backedOff, at: start)
        #expect(
            decision
                == AuditRecord.Decision(at: start, kind: .backedOff, size: 8, audited: 3, agreed: 2, cap: 4))
        #expect(record.itemLimit(at: start) == 4 && record.watched)
        #expect(
            AuditNews.line(decision, model: "m")
                == "batched prompts of 8 items to m not shown to hold up within the audit's proving share, "
                + "leaning to changed answers (2 of 3 audited at their tail agreed): at most 4 items a prompt from now on"
        )
    }

    @Test func aRecordWrittenBeforeTheSequentialTestStillReads() throws {
        let text = """
            {"cap":4,"decisions":[{"agreed":2,"at":8.0e8,"audited":4,"cap":4,"kind":"halved","size":8}],\
            "failedSize":8,"job":"j","model":"m","pauses":1,"probeAt":8.1e8,"provider":"sim",\
            "tallies":[{"agreed":4,"audited":4,"late":1,"size":4}],"updatedAt":8.0e8}
            """
        let record = try #require(AuditRecord.stored(text))
        #expect(record.cap == 4 && record.decisions.map(\.kind) == [.halved] && record.sizes.isEmpty)
        #expect(record.shape == nil && !record.matches(shape: "s", target: 0.95), "its audit starts over")
    }
}
