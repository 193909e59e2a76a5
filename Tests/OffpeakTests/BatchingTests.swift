import Foundation
import Testing

@testable import Offpeak

struct AnswerSplitterTests {
    let ids = ["i1", "i2", "i3"]

    @Test func acceptsAPlainObject() {
        let split = AnswerSplitter.split(#"{"i1": "a", "i2": "b", "i3": "c"}"#, ids: ids)
        #expect(split.answers == ["i1": "a", "i2": "b", "i3": "c"])
        #expect(split.rejected.isEmpty)
    }

    @Test func toleratesProseCodeFencesAndOrder() {
        let text =
            "Here you go:\n```json\n{\"i3\": \"c\",\n \"i1\": \"a \\\"quoted\\\"\", \"i2\": \"b\\u00e9\"}\n```\nDone."
        let split = AnswerSplitter.split(text, ids: ids)
        #expect(split.answers == ["i1": "a \"quoted\"", "i2": "bé", "i3": "c"])
    }

    @Test func sendsBackMissingDuplicatedEmptyAndMalformedItems() {
        let split = AnswerSplitter.split(
            #"{"i1": "a", "i1": "a again", "i2": "  ", "i3": 42}"#, ids: ids + ["i4"])
        #expect(split.answers.isEmpty)
        #expect(split.rejected == ["i1": .duplicated, "i2": .empty, "i3": .malformed, "i4": .missing])
    }

    @Test func trustsNothingWhenTheAnswerHasIdsThatWereNotAsked() {
        let split = AnswerSplitter.split(#"{"i1": "a", "i2": "b", "i3": "c", "i9": "d"}"#, ids: ids)
        #expect(split.answers.isEmpty)
        #expect(split.rejected.count == 3)
        #expect(split.rejected["i1"] == .unexpectedKey)
    }

    @Test func brokenJSONRejectsEveryItem() {
        let split = AnswerSplitter.split(#"{"i1": "a", "i2": "b"#, ids: ids)
        #expect(split.rejected == ["i1": .noJSON, "i2": .noJSON, "i3": .noJSON])
    }

    @Test func skipsBracesInProseBeforeTheObject() {
        let split = AnswerSplitter.split(#"Use {curly} braces. {"i1": "x", "i2": "y", "i3": "z"}"#, ids: ids)
        #expect(split.answers.count == 3)
    }
}

struct BatchPlannerTests {
    /// A shared prefix long enough that batching pays (see `worthBatching`).
    static let longSystem = String(repeating: "Label the ticket by its topic. ", count: 20)

    static func pending(
        _ texts: [String], attempts: Int = 0, system: String = longSystem, maxTokens: Int = 50
    )
        -> [(record: RequestRecord, request: CompletionRequest)]
    {
        texts.enumerated().map { index, text in
            let request = CompletionRequest(
                model: "m", system: system, messages: [ChatMessage(role: .user, content: text)],
                maxTokens: maxTokens)
            let record = RequestRecord(
                id: "r\(String(format: "%016d", index))", runId: "run", job: "j", itemId: "\(index)",
                position: index,
                source: .spec, clientId: nil, tier: "fast", payload: "", cacheKey: "", state: .pending,
                attempts: attempts, nextAttemptAt: nil, error: nil, createdAt: Date(), updatedAt: Date())
            return (record, request)
        }
    }

    let planner = BatchPlanner(
        batching: JobSpec.Batching(maxItems: 4), contextWindow: 100_000, maxOutputTokens: 4096)

    @Test func packsUpToMaxItemsPerCall() {
        let calls = planner.plan(Self.pending((1...10).map { "item \($0)" }))
        #expect(calls.map(\.requests.count) == [4, 4, 2])
        let first = calls[0]
        #expect(first.isBatched)
        #expect(first.request.system == Self.longSystem)
        let prompt = first.request.messages[0].content
        for id in first.itemIDs { #expect(prompt.contains("<item id=\"\(id)\">")) }
        #expect(first.request.maxTokens == 16 + 4 * (50 + BatchPlanner.perItemOverhead))
    }

    @Test func onlyIdenticalPrefixesShareACall() {
        let one = Self.longSystem + "1"
        let two = Self.longSystem + "2"
        let calls = planner.plan(
            Self.pending(["a", "b"], system: one) + Self.pending(["c", "d"], system: two))
        #expect(calls.count == 2)
        #expect(Set(calls.map { $0.request.system ?? "" }) == [one, two])
    }

    @Test func largeItemsAndBatchingOffGoAlone() {
        let big = String(repeating: "word ", count: 2000)
        let calls = planner.plan(Self.pending(["a", big, "b"]))
        #expect(calls.map(\.requests.count).sorted() == [1, 2])
        #expect(calls.first { $0.requests.count == 1 }?.isBatched == false)
        let off = BatchPlanner(
            batching: JobSpec.Batching(enabled: false), contextWindow: 100_000, maxOutputTokens: 4096)
        #expect(off.plan(Self.pending(["a", "b", "c"])).allSatisfy { !$0.isBatched })
    }

    @Test func aShortSharedPrefixIsNotWorthBatching() {
        #expect(
            planner.plan(Self.pending(["a", "b", "c"], system: "Be brief.")).allSatisfy { !$0.isBatched })
        #expect(!planner.worthBatching(prefixTokens: 40))
        #expect(planner.worthBatching(prefixTokens: 150))
        let cheapOutput = BatchPlanner(
            batching: JobSpec.Batching(maxItems: 4), contextWindow: 100_000, maxOutputTokens: 4096,
            outputWeight: 1)
        #expect(cheapOutput.worthBatching(prefixTokens: 60))
    }

    @Test func rejectedItemsGetSmallerBatchesThenGoAlone() {
        #expect(
            planner.plan(Self.pending(["a", "b", "c", "d"], attempts: 1)).map(\.requests.count) == [2, 2])
        #expect(planner.plan(Self.pending(["a", "b", "c"], attempts: 2)).allSatisfy { !$0.isBatched })
    }

    @Test func itemsOfSimilarLengthGoTogether() {
        let texts = [
            "x", String(repeating: "long ", count: 40), "y", String(repeating: "long ", count: 41), "z", "w",
        ]
        let calls = planner.plan(Self.pending(texts))
        let lengths = calls.map { $0.itemTexts.map(\.count) }
        #expect(lengths[0].allSatisfy { $0 == 1 })
        #expect(lengths.last?.allSatisfy { $0 > 100 } == true)
    }
}

struct SubmissionTests {
    static func spec() throws -> JobSpec {
        var spec = JobSpec(
            name: "inbox", kind: .prompt, template: try Template("Q: {{item}} ({{topic}})"),
            output: "out/inbox")
        spec.acceptsSubmissions = true
        return spec
    }

    @Test func parsesVarsPromptIdAndTier() throws {
        let spec = try Self.spec()
        let one = try Submission.parse(
            #"{"id": "c1", "vars": {"item": "why?", "topic": 3}, "tier": "powerful"}"#, location: "stdin:1",
            spec: spec)
        #expect(one.clientId == "c1")
        #expect(one.variables["topic"] == "3")
        #expect(one.tier == .powerful)
        #expect(one.userMessage(for: spec) == "Q: why? (3)")
        let two = try Submission.parse(#"{"prompt": "hello"}"#, location: "stdin:2", spec: spec)
        #expect(two.userMessage(for: spec) == "hello")
    }

    @Test(arguments: [
        ("nope", "stdin:7: expected one JSON object"),
        (#"{"vars": {"item": "x"}}"#, "stdin:7: vars.topic: missing"),
        (#"{"prompt": "x", "colour": 1}"#, "stdin:7: colour: unknown field"),
        (#"{"prompt": "x", "tier": "huge"}"#, "stdin:7: tier: expected fast"),
        (#"{}"#, "stdin:7: expected 'vars'"),
        (#"{"prompt": "x", "vars": {"item": "y"}}"#, "stdin:7: prompt: give 'vars' or 'prompt'"),
    ])
    func badLinesNameTheirLineAndField(line: String, expected: String) throws {
        let spec = try Self.spec()
        do {
            _ = try Submission.parse(line, location: "stdin:7", spec: spec)
            Issue.record("expected an error for \(line)")
        } catch {
            #expect(error.status == .dataError)
            #expect(error.description.hasPrefix(expected), "\(error.description)")
        }
    }
}
