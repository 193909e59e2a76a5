import Foundation
import Testing

@testable import Offpeak

/// Adaptive batching's record of a model (`BatchFitness`): smaller prompts, then none, then a probe.
struct BatchFitnessTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aPromptKeepingLessThanHalfHalvesTheModelsPrompts() {
        var fitness = BatchFitness(provider: "sim", model: "m", at: start)
        fitness.record(
            asked: 8, kept: 3, rejected: ["missing from the answer": 5], structured: false, at: start)
        #expect(fitness.itemLimit(at: start) == 4)
        fitness.record(asked: 4, kept: 4, rejected: [:], structured: false, at: start)
        #expect(fitness.itemLimit(at: start) == 8, "a prompt that keeps everything doubles it back")
        #expect(fitness.rejections == ["missing from the answer": 5])
        #expect(fitness.itemsAsked == 12 && fitness.itemsKept == 7 && fitness.prompts == 2)
    }

    @Test func twoPromptsInARowThatKeepNothingStopBatchingForAWhileThenProbe() {
        var fitness = BatchFitness(provider: "sim", model: "m", at: start)
        fitness.record(
            asked: 8, kept: 0, rejected: ["no JSON object in the answer": 8], structured: false, at: start)
        #expect(fitness.itemLimit(at: start) == 4)
        fitness.record(
            asked: 8, kept: 0, rejected: ["no JSON object in the answer": 8], structured: false, at: start)
        #expect(fitness.itemLimit(at: start) == 1, "the rest goes alone, not in halves of halves")
        let later = start.addingTimeInterval(BatchFitness.firstPause - 1)
        #expect(fitness.itemLimit(at: later) == 1)
        // A prompt sent before the pause, coming back during it, changes nothing.
        fitness.record(asked: 8, kept: 0, rejected: [:], structured: false, at: later)
        #expect(fitness.pausedUntil == start.addingTimeInterval(BatchFitness.firstPause))
        let over = start.addingTimeInterval(BatchFitness.firstPause)
        #expect(fitness.itemLimit(at: over) == 2, "a pause over, a probe of two")
        fitness.record(asked: 2, kept: 0, rejected: [:], structured: false, at: over)
        #expect(
            fitness.pausedUntil == over.addingTimeInterval(2 * BatchFitness.firstPause),
            "a failed probe doubles")
        let after = over.addingTimeInterval(2 * BatchFitness.firstPause)
        fitness.record(asked: 2, kept: 2, rejected: [:], structured: false, at: after)
        #expect(fitness.pausedUntil == nil && fitness.pauses == 0)
        #expect(fitness.itemLimit(at: after) == 4, "batching grows back from a probe that worked")
    }

    @Test func aPlainLossTheStructuredFormCanHelpChangesNoLimit() {
        var fitness = BatchFitness(provider: "sim", model: "m", at: start)
        fitness.record(
            asked: 8, kept: 0, rejected: ["no JSON object in the answer": 8], structured: false,
            formCanHelp: true,
            at: start)
        #expect(fitness.itemLimit(at: start) == nil)
        #expect(fitness.lostPlainAnswers(at: start))
        #expect(!fitness.lostPlainAnswers(at: start.addingTimeInterval(BatchFitness.memory)))
    }

    @Test func theRecordIsKeptInTheStorePerProviderAndModel() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try Store.open(Workspace(root: folder))
        try store.batches.updateBatchFitness(provider: "openai", model: "m", at: start) {
            $0.refuseStructured("400: response_format is not supported", at: start)
        }
        try store.batches.updateBatchFitness(provider: "openai", model: "m", at: start) {
            $0.record(
                asked: 4, kept: 1, rejected: ["missing from the answer": 3], structured: false, at: start)
        }
        let kept = try #require(try store.batches.batchFitness(provider: "openai", model: "m"))
        #expect(kept.refusesStructured(at: start) && kept.itemLimit(at: start) == 2)
        #expect(try store.batches.batchFitness(provider: "sim", model: "m") == nil)
        let line = try #require(FitnessLine(kept, now: start))
        #expect(
            FitnessLine.text([line]) == """

                batched prompts that lost items:
                MODEL  PROMPTS  ITEMS KEPT  REJECTED                   NOW
                m      1        1/4         missing from the answer 3  at most 2 a prompt; structured output refused (400: response_format is not supported)

                """)
    }
}
