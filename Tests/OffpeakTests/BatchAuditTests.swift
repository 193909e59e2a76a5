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
        func admitted(workers: Int, within share: Double = 0.03) -> Int {
            var room = AuditShare(
                others: AuditShare.Cost(dollars: 0, tokens: 0),
                audited: AuditShare.Cost(dollars: 0.5, tokens: 0), workers: workers)
            var count = 0
            while room.admits([audit], runLeft: whole, within: share) { count += 1 }
            return count
        }
        // $3 of room, $0.50 made: five more audits for one process, a third of that for each of three.
        #expect(admitted(workers: 1) == 5)
        #expect(admitted(workers: 3) == 1)
        #expect(admitted(workers: 3) * 3 <= admitted(workers: 1))
        // While a size is proven the proving share is the room: $25, $0.50 of it made.
        #expect(admitted(workers: 1, within: 0.25) == 49)
    }

    @Test func theSampleIsStableAndNearItsRate() {
        let ids = (0..<10_000).map { "run-1/item-\($0)" }
        // A prompt of 8 is drawn with a chance of 8 x 2 %: about 1,600 of 10,000.
        let sampled = ids.filter {
            !AuditSampling.sampledPlaces(size: 8, firstRequestID: $0, rate: 0.02).isEmpty
        }
        #expect((1_450...1_750).contains(sampled.count), "\(sampled.count)")
        #expect(
            sampled
                == ids.filter {
                    !AuditSampling.sampledPlaces(size: 8, firstRequestID: $0, rate: 0.02).isEmpty
                })
        #expect(AuditSampling.sampledPlaces(size: 8, firstRequestID: "x", rate: 0).isEmpty)
        #expect(
            AuditSampling.sampledPlaces(size: 1, firstRequestID: "x", rate: 1).isEmpty,
            "alone: nothing to audit")
    }
    @Test func specsTakeTheAuditTheTargetAndTheShares() throws {
        let workspace = FileManager.default.temporaryDirectory
        func parse(_ extra: String) throws -> JobSpec {
            try JobSpecParser.parse(
                yaml: "kind: prompt\ntemplate: \"{{item}}\"\nitems: [a, b]\n" + extra, path: "jobs/t.yaml",
                workspace: workspace)
        }
        #expect(try parse("").auditing == JobSpec.Audit())
        #expect(try parse("").audit == nil, "a spec without it encodes as before")
        #expect(try parse("").auditTarget == 0.95, "the documented default")
        #expect(try parse("").auditing.proving == 0.25)
        #expect(try parse("audit: off\n").auditing.enabled == false)
        #expect(try parse("audit: 0.1\n").auditing == JobSpec.Audit(enabled: true, rate: 0.1, maxShare: 0.03))
        #expect(try parse("audit: 5%\n").auditing.rate == 0.05)
        #expect(
            try parse("audit: {rate: 0.05, max_share: 0.1}\n").auditing
                == JobSpec.Audit(enabled: true, rate: 0.05, maxShare: 0.1))
        let full = try parse("audit: {agree: 99 %, rate: 1%, max_share: 2%, proving_share: 40%}\n")
        #expect(full.auditTarget == 0.99)
        #expect(full.auditing.rate == 0.01 && full.auditing.maxShare == 0.02 && full.auditing.proving == 0.4)
        #expect(try parse("audit: {agree: 0.9}\n").auditTarget == 0.9)
        #expect(try parse("batching: {min_agreement: 0.8}\n").auditTarget == 0.8, "its first spelling")
        #expect(
            try parse("batching: {min_agreement: 0.8}\naudit: {agree: 90%}\n").auditTarget == 0.9,
            "audit.agree wins")
        func failure(_ extra: String) -> String {
            do {
                _ = try parse(extra)
                return "no error"
            } catch { return "\(error)" }
        }
        #expect(
            failure("audit: sometimes\n")
                == "jobs/t.yaml:4:8: audit: expected 'off', 'on', a rate (like 0.02 or 2%) or a mapping with "
                + "agree, rate, max_share and proving_share, got 'sometimes'")
        #expect(
            failure("audit: {rate: 2}\n")
                == "jobs/t.yaml:4:15: audit.rate: expected a share more than 0 and at most 1, like 0.03 or 3%, got '2'"
        )
        #expect(
            failure("audit: {agree: 100%}\n")
                == "jobs/t.yaml:4:16: audit.agree: expected a share more than 0 and less than 1, like 0.95 or 95%, "
                + "got '100%'")
        #expect(
            failure("audit: {agree: often}\n").hasPrefix("jobs/t.yaml:4:16: audit.agree: expected a share"))
        #expect(
            failure("audit: {proving: 1}\n")
                == "jobs/t.yaml:4:9: audit.proving: unknown field (allowed: agree, rate, max_share, proving_share)"
        )
        #expect(
            failure("batching: {min_agreement: 0}\n").hasPrefix("jobs/t.yaml:4:27: batching.min_agreement: "))
    }
}
