import Foundation
import Testing

@testable import Offpeak

/// A batched prompt may write every item's answer (issue 13, item 3): its `max_tokens` is the sum
/// of its items' own `max_tokens`, each with its per-item overhead (id, quotes, separators), and
/// the object's braces; never more than the model may write, so a batch that would need more is
/// split instead.
struct BatchMaxTokensTests {
    @Test func aBatchMayWriteEachItemsOwnAnswer() {
        let planner = BatchPlanner(
            batching: JobSpec.Batching(maxItems: 8), contextWindow: 100_000, maxOutputTokens: 4096)
        var pending = BatchPlannerTests.pending(["a", "b", "c", "d"])
        for (index, allowed) in [10, 20, 30, 40].enumerated() { pending[index].request.maxTokens = allowed }
        let calls = planner.plan(pending)
        #expect(calls.map(\.requests.count) == [4])
        #expect(calls.first?.request.maxTokens == 16 + (10 + 20 + 30 + 40) + 4 * BatchPlanner.perItemOverhead)
    }

    @Test func aBatchNeverAsksMoreThanTheModelMayWrite() {
        // 16 + 2 x (50 + 16) = 148 fits in 200 output tokens; a third item (214) does not.
        let planner = BatchPlanner(
            batching: JobSpec.Batching(maxItems: 8), contextWindow: 100_000, maxOutputTokens: 200)
        let calls = planner.plan(BatchPlannerTests.pending(["a", "b", "c", "d", "e"]))
        #expect(calls.map(\.requests.count) == [2, 2, 1])
        #expect(calls.map(\.request.maxTokens) == [148, 148, 50])
    }
}
