import Foundation
import Testing

@testable import Offpeak

/// The batch audit's pure parts: comparing two answers, the Wilson interval, which items are
/// audited, and what an audit record decides (`AuditRecord`).
struct BatchAuditTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func shortAnswersAgreeWordForWordAfterNormalizing() {
        let same = AnswerAgreement.Verdict(agreed: true, similarity: 1)
        let different = AnswerAgreement.Verdict(agreed: false, similarity: 0)
        #expect(AnswerAgreement.compare("Billing.", "billing") == same)
        #expect(AnswerAgreement.compare("  YES ", "yes!") == same)
        #expect(AnswerAgreement.compare("Café", "cafe") == same)
        #expect(AnswerAgreement.compare("3.50", "3.5") == same)
        #expect(AnswerAgreement.compare("1,000 units", "1000 units") == same)
        #expect(AnswerAgreement.compare("Answer: bug", "Answer: billing") == different)
        #expect(AnswerAgreement.compare("no", "yes") == different)
        #expect(AnswerAgreement.compare("label: bug report", "bug report label") == different, "order counts")
    }

    @Test func longAnswersAgreeByTokenF1() {
        let single = "The printer on the third floor jams whenever someone prints double sided pages at night"
        let reworded = "The printer on the third floor jams when someone prints double sided pages at night"
        let verdict = AnswerAgreement.compare(reworded, single)
        #expect(verdict.agreed)
        #expect(abs(verdict.similarity - 14.0 / 15.0) < 1e-9, "14 of 15 words shared")
        // Cut to its first 7 of 15 words: recall 7/15, precision 1, F1 14/22, below the threshold.
        let words = single.split(separator: " ")
        let half = words.prefix(words.count / 2).joined(separator: " ")
        let cut = AnswerAgreement.compare(half, single)
        #expect(!cut.agreed)
        #expect(abs(cut.similarity - 14.0 / 22.0) < 1e-9)
        let neighbour = AnswerAgreement.compare(
            "Customer asks for a refund of the annual plan charged twice in March", single)
        #expect(
            neighbour
                == AnswerAgreement.Verdict(
                    agreed: false,
                    similarity: AnswerAgreement.f1(
                        AnswerAgreement.words(
                            "Customer asks for a refund of the annual plan charged twice in March"),
                        AnswerAgreement.words(single))))
        #expect(neighbour.similarity < 0.3)
    }

    @Test func wilsonIntervalMatchesThePublishedValues() {
        func rounded(_ interval: WilsonInterval) -> [Double] {
            [interval.lower, interval.upper].map { ($0 * 1000).rounded() / 1000 }
        }
        #expect(rounded(WilsonInterval(successes: 4, trials: 4)) == [0.510, 1.0])
        #expect(rounded(WilsonInterval(successes: 2, trials: 4)) == [0.150, 0.850])
        #expect(rounded(WilsonInterval(successes: 0, trials: 1)) == [0.0, 0.793])
        #expect(rounded(WilsonInterval(successes: 95, trials: 100)) == [0.888, 0.978])
        let nothing = WilsonInterval(successes: 0, trials: 0)
        #expect(nothing.lower == 0 && nothing.upper == 1)
    }

    /// Processes answering one run side by side each queue audits the others cannot see yet:
    /// each takes its part of the room, so together they keep to the share one process keeps to.
    @Test func processesAnsweringOneRunEachTakeTheirPartOfTheAuditsRoom() {
        let whole = AuditShare.Cost(dollars: 100, tokens: 0)
        let audit = AuditShare.Cost(dollars: 0.5, tokens: 0)
        func admitted(workers: Int) -> Int {
            var share = AuditShare(
                maxShare: 0.03, others: AuditShare.Cost(dollars: 0, tokens: 0),
                audited: AuditShare.Cost(dollars: 0.5, tokens: 0), workers: workers)
            var count = 0
            while share.admits([audit], runLeft: whole) { count += 1 }
            return count
        }
        // $3 of room, $0.50 made: five more audits for one process, a third of that for each of three.
        #expect(admitted(workers: 1) == 5)
        #expect(admitted(workers: 3) == 1)
        #expect(admitted(workers: 3) * 3 <= admitted(workers: 1))
    }

    @Test func probesSpreadFromTheFirstItemToTheLast() {
        #expect(AuditSampling.probePositions(size: 8, round: 0) == [0, 2, 4, 7])
        #expect(AuditSampling.probePositions(size: 8, round: 1) == [0, 2, 5, 7])
        #expect(AuditSampling.probePositions(size: 4, round: 0) == [0, 1, 2, 3])
        #expect(AuditSampling.probePositions(size: 3, round: 2) == [0, 1, 2])
        #expect(AuditSampling.probePositions(size: 20, round: 0) == [0, 6, 12, 19])
        #expect(AuditSampling.probePositions(size: 0, round: 0) == [])
    }

    @Test func theSampleIsStableAndNearItsRate() {
        let ids = (0..<10_000).map { "run-1/item-\($0)" }
        let sampled = ids.filter { AuditSampling.sampled($0, rate: 0.02) }
        #expect((150...250).contains(sampled.count), "\(sampled.count)")
        #expect(sampled == ids.filter { AuditSampling.sampled($0, rate: 0.02) })
        #expect(!AuditSampling.sampled("x", rate: 0) && AuditSampling.sampled("x", rate: 1))
    }

    @Test func aSizeWhoseProbeDisagreesIsHalvedAndItsAnswersAreAskedAgainLater() {
        var record = AuditRecord(job: "j", provider: "sim", model: "m", at: start)
        #expect(record.standing(size: 8, minAgreement: 0.9) == .unproven)
        #expect(record.record(size: 8, position: 8, agreed: true, minAgreement: 0.9, at: start) == nil)
        #expect(record.record(size: 8, position: 8, agreed: false, minAgreement: 0.9, at: start) == nil)
        #expect(record.record(size: 8, position: 8, agreed: true, minAgreement: 0.9, at: start) == nil)
        #expect(record.itemLimit(at: start) == nil, "judged only once the probe's four items are in")
        let decision = record.record(size: 8, position: 8, agreed: false, minAgreement: 0.9, at: start)
        #expect(
            decision
                == AuditRecord.Decision(at: start, kind: .halved, size: 8, audited: 4, agreed: 2, cap: 4))
        #expect(record.itemLimit(at: start) == 4)
        #expect(record.standing(size: 8, minAgreement: 0.9) == .unproven)
        #expect(record.probeAt == start.addingTimeInterval(AuditRecord.firstPause))
        // An answer of a prompt of 8 sent before the cap changes nothing.
        #expect(record.record(size: 8, position: 8, agreed: true, minAgreement: 0.9, at: start) == nil)
        #expect(record.tally(size: 8) == nil)
        // Size 4 holds: proven after four agreeing items; 3 is proven with it.
        for _ in 0..<3 {
            #expect(record.record(size: 4, position: 4, agreed: true, minAgreement: 0.9, at: start) == nil)
        }
        #expect(
            record.record(size: 4, position: 4, agreed: true, minAgreement: 0.9, at: start)?.kind == .proven)
        #expect(record.standing(size: 3, minAgreement: 0.9) == .proven)
        #expect(record.standing(size: 4, minAgreement: 0.9) == .proven)
        #expect(record.itemLimit(at: start) == 4)
    }

    @Test func afterThePauseTheFailedSizeIsProbedAgainAndTheCapGoesWhenItHolds() {
        var record = AuditRecord(job: "j", provider: "sim", model: "m", at: start)
        for agreed in [false, false, false, false] {
            record.record(size: 2, position: 2, agreed: agreed, minAgreement: 0.9, at: start)
        }
        #expect(record.itemLimit(at: start) == 1, "even two a prompt disagree: items go alone")
        #expect(record.decisions.last?.kind == .off)
        let over = start.addingTimeInterval(AuditRecord.firstPause)
        #expect(record.itemLimit(at: over) == 2, "the pause over, the failed size is tried again")
        #expect(record.record(size: 2, position: 2, agreed: false, minAgreement: 0.9, at: over) == nil)
        #expect(record.decisions.last?.kind == .probe)
        for _ in 0..<3 { record.record(size: 2, position: 2, agreed: false, minAgreement: 0.9, at: over) }
        #expect(record.itemLimit(at: over) == 1)
        #expect(
            record.probeAt == over.addingTimeInterval(2 * AuditRecord.firstPause),
            "a failed probe doubles the pause")
        let later = over.addingTimeInterval(2 * AuditRecord.firstPause)
        for _ in 0..<3 { record.record(size: 2, position: 2, agreed: true, minAgreement: 0.9, at: later) }
        #expect(
            record.record(size: 2, position: 2, agreed: true, minAgreement: 0.9, at: later)?.kind == .proven)
        #expect(record.itemLimit(at: later) == nil && record.failedSize == nil && record.pauses == 0)
    }

    /// Two probes cut short by kills, each after its first two places agreed: four agreeing items,
    /// none from the prompts' last quarter, where answers go wrong first. Not proven: the next
    /// prompt of the size is a probe again; its last place decides.
    @Test func agreementAtTheFirstPlacesAloneProvesNothing() {
        var record = AuditRecord(job: "j", provider: "sim", model: "m", at: start)
        for position in [1, 3, 1, 3] {
            #expect(
                record.record(size: 8, position: position, agreed: true, minAgreement: 0.9, at: start) == nil)
        }
        #expect(record.standing(size: 8, minAgreement: 0.9) == .unproven)
        #expect(record.tally(size: 8) == AuditRecord.Tally(size: 8, audited: 4, agreed: 4, late: nil))
        #expect(AuditRecord.isLate(position: 7, size: 8) && !AuditRecord.isLate(position: 6, size: 8))
        #expect(AuditRecord.isLate(position: 3, size: 3) && !AuditRecord.isLate(position: 2, size: 3))
        let decision = record.record(size: 8, position: 8, agreed: true, minAgreement: 0.9, at: start)
        #expect(decision?.kind == .proven)
        #expect(record.tally(size: 8)?.late == 1)
    }

    @Test func aProvenSizeFailsOnceEnoughLaterAnswersDisagree() {
        var record = AuditRecord(job: "j", provider: "sim", model: "m", at: start)
        for _ in 0..<4 { record.record(size: 8, position: 8, agreed: true, minAgreement: 0.9, at: start) }
        #expect(record.standing(size: 8, minAgreement: 0.9) == .proven)
        // 4 of 7 agree: the interval's top (0.84) is under 0.9; 4 of 6 (0.90) is not yet.
        for _ in 0..<2 {
            #expect(record.record(size: 8, position: 8, agreed: false, minAgreement: 0.9, at: start) == nil)
        }
        #expect(
            record.record(size: 8, position: 8, agreed: false, minAgreement: 0.9, at: start)?.kind == .halved)
        #expect(record.itemLimit(at: start) == 4)
    }

    @Test func specsTakeTheAuditAndTheMinimumAgreement() throws {
        let workspace = FileManager.default.temporaryDirectory
        func parse(_ extra: String) throws -> JobSpec {
            try JobSpecParser.parse(
                yaml: "kind: prompt\ntemplate: \"{{item}}\"\nitems: [a, b]\n" + extra, path: "jobs/t.yaml",
                workspace: workspace)
        }
        #expect(try parse("").auditing == JobSpec.Audit())
        #expect(try parse("").audit == nil, "a spec without it encodes as before")
        #expect(try parse("audit: off\n").auditing.enabled == false)
        #expect(try parse("audit: 0.1\n").auditing == JobSpec.Audit(enabled: true, rate: 0.1, maxShare: 0.03))
        #expect(
            try parse("audit: {rate: 0.05, max_share: 0.1}\n").auditing
                == JobSpec.Audit(enabled: true, rate: 0.05, maxShare: 0.1))
        #expect(try parse("batching: {min_agreement: 0.8}\n").batching.agreementWanted == 0.8)
        #expect(try parse("").batching.agreementWanted == 0.9)
        func failure(_ extra: String) -> String {
            do {
                _ = try parse(extra)
                return "no error"
            } catch { return "\(error)" }
        }
        #expect(
            failure("audit: sometimes\n")
                == "jobs/t.yaml:4:8: audit: expected 'off', 'on', a rate from 0 to 1 or a mapping with rate "
                + "and max_share, got 'sometimes'")
        #expect(failure("audit: {rate: 2}\n").hasPrefix("jobs/t.yaml:4:15: audit.rate: expected a number"))
        #expect(
            failure("batching: {min_agreement: 0}\n").hasPrefix("jobs/t.yaml:4:27: batching.min_agreement: "))
    }
}
