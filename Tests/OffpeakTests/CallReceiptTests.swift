import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// `CallReceipt`: a response, or a round of cache hits, as what the store keeps.
@Suite(.ownThreads) struct CallReceiptTests {
    @Test func anAnsweredRequestIsAResultALedgerRowAndACacheEntry() {
        let now = LoopFixtures.t0 + 2
        let receipt = CallReceipt.answered(
            LoopFixtures.single(), response: LoopFixtures.response("Brief."), price: LoopFixtures.haiku,
            line: LoopFixtures.line, started: LoopFixtures.t0, now: now)
        let ledger = receipt.ledger
        #expect(ledger?.dollars == 1000 * 1e-06 + 200 * 5e-06)
        #expect(ledger?.latencyMs == 2000 && ledger?.unpriced == false && ledger?.items == 1)
        #expect(receipt.results.map(\.text) == ["Brief."])
        #expect(receipt.results.first?.dollars == ledger?.dollars)
        #expect(receipt.cacheEntries.map(\.key) == ["key-r1"])
        #expect(receipt.cacheEntries.first?.answer.naiveDollars == ledger?.naiveDollars)
        #expect(receipt.itemsAnswered == 1 && receipt.failed.isEmpty && receipt.stop == nil)
    }

    /// A cut-off answer was paid for: it is kept and cached as it came, marked by its finish reason,
    /// so a rerun is answered from the cache instead of buying it again.
    @Test func anAnswerCutOffIsKeptAndCachedMarkedAsCutOff() {
        let receipt = CallReceipt.answered(
            LoopFixtures.single(maxTokens: 200), response: LoopFixtures.response("Brief", finish: .length),
            price: LoopFixtures.haiku, line: LoopFixtures.line, started: LoopFixtures.t0, now: LoopFixtures.t0
        )
        #expect(receipt.ledger?.outputTokens == 200)
        #expect(receipt.results.map(\.text) == ["Brief"])
        #expect(receipt.results.map(\.finishReason) == ["length"])
        #expect(receipt.cacheEntries.map(\.answer.finishReason) == ["length"])
        #expect(receipt.itemsAnswered == 1 && receipt.failed.isEmpty && receipt.retry.isEmpty)
    }

    @Test func aBatchedAnswerSharesItsCostAndSendsBackWhatItLost() throws {
        let records = ["r1", "r2", "r3"].map { LoopFixtures.record($0) }
        let call = LoopFixtures.batch(records, texts: ["first item text", "second one", "third"])
        let receipt = CallReceipt.answered(
            call,
            response: LoopFixtures.response(
                #"{"i1": "one", "i3": "a much longer answer for the third item"}"#),
            price: LoopFixtures.haiku, line: LoopFixtures.line, started: LoopFixtures.t0, now: LoopFixtures.t0
        )
        let ledger = try #require(receipt.ledger)
        #expect(receipt.results.map(\.requestId) == ["r1", "r3"])
        #expect(receipt.retry.map(\.id) == ["r2"])
        #expect(receipt.retry.first?.reason == "batched answer: missing from the answer")
        let shared = receipt.results.reduce(0) { $0 + $1.dollars }
        #expect(abs(shared - ledger.dollars) < 1e-12, "the call's cost is shared out whole")
        #expect(receipt.results[0].dollars != receipt.results[1].dollars, "by token share")
        let naive = receipt.cacheEntries.reduce(0) { $0 + $1.answer.naiveDollars }
        #expect(abs(naive - ledger.naiveDollars) < 1e-12, "naive: the answered items alone")
        #expect(receipt.itemsAnswered == 2)
    }

    @Test func stepsOfALongDocumentAreNotCountedAsItems() {
        let step = LoopFixtures.record("r1", source: .chunk)
        let receipt = CallReceipt.answered(
            LoopFixtures.single(step), response: LoopFixtures.response("part"), price: nil,
            line: LoopFixtures.line,
            started: LoopFixtures.t0, now: LoopFixtures.t0)
        #expect(receipt.results.count == 1 && receipt.itemsAnswered == 0)
        #expect(receipt.ledger?.unpriced == true && receipt.ledger?.dollars == 0)
    }

    @Test func cacheHitsCostNothingAndRecordWhatTheySaved() {
        let answer = CachedAnswer(
            text: "kept", model: "claude-haiku-4-5", finishReason: "end_turn", inputTokens: 10,
            outputTokens: 2,
            dollars: 0.5, naiveDollars: 0.75)
        let hits = CallReceipt.cacheHits(
            [(LoopFixtures.record("r1"), answer)], line: LoopFixtures.line, now: LoopFixtures.t0)
        #expect(hits.count == 1)
        #expect(hits.first?.ledger.cacheHit == true && hits.first?.ledger.dollars == 0)
        #expect(hits.first?.ledger.naiveDollars == 0.75 && hits.first?.ledger.unpriced == false)
        #expect(hits.first?.result.fromCache == true && hits.first?.result.text == "kept")
    }
}
