import Foundation
import OffpeakTestSupport
import Testing

@testable import OffpeakSimKit

/// `--degrading-model`: batched answers that keep their shape but get items after a position
/// wrong, while the same items sent alone are answered right, so only a batch audit can tell.
@Suite(.ownThreads) struct SimDegradationTests {
    static let texts = [
        "What is two plus two?", "Where is Paris?", "Who wrote Hamlet?", "Why is the sky blue?",
    ]
    static let right = Self.texts.map { "Answer: " + $0 }
    let items = zip(["a", "b", "c", "d"], Self.texts).map { BatchItem(id: $0, text: $1) }

    private var whole: BatchAnswer { AnswerComposer().batchAnswer(for: items) }

    /// The batched prompt of `texts`, as offpeak writes its items.
    static var prompt: String {
        "Answer each item.\n"
            + zip(["a", "b", "c", "d"], texts).map { "\n<item id=\"\($0)\">\n\($1)\n</item>\n" }.joined()
    }

    /// The compact object of `answers` keyed a, b, c, d.
    static func object(_ answers: [String]) -> String {
        BatchAnswer(
            items: zip(["a", "b", "c", "d"], answers).map { BatchItem(id: $0, text: $1) }, answers: answers
        )
        .text
    }

    private func degraded(_ kind: Degradation.Kind, after: Int, seed: UInt64 = 7) -> (BatchAnswer, Int) {
        let result = Degradation(kind: kind, after: after).degrade(whole, items: items, seed: seed)
        return (result.answer, result.degraded)
    }

    // MARK: - Kinds

    @Test func wrongLabelAnswersLaterItemsWithALabel() {
        let (answer, count) = degraded(.wrongLabel, after: 2)
        #expect(
            answer.text
                == #"{"a":"Answer: What is two plus two?","b":"Answer: Where is Paris?","#
                + #""c":"Answer: billing","d":"Answer: account"}"#)
        #expect(count == 2)
        #expect(answer.entries.map(\.key) == ["a", "b", "c", "d"], "the shape is kept")
    }

    @Test func neighbourAnswersWithTheAnswerOfTheItemBefore() {
        let (answer, count) = degraded(.neighbour, after: 1)
        #expect(
            answer.text
                == Self.object([Self.right[0], Self.right[0], Self.right[1], Self.right[2]]))
        #expect(count == 3)
        // Items whose neighbour has the same answer are not changed, so not counted.
        let same = [BatchItem(id: "x", text: "Same."), BatchItem(id: "y", text: "Same.")]
        let twin = Degradation(kind: .neighbour, after: 1).degrade(
            AnswerComposer().batchAnswer(for: same), items: same, seed: 7)
        #expect(twin.answer.text == #"{"x":"Answer: Same.","y":"Answer: Same."}"#)
        #expect(twin.degraded == 0)
    }

    @Test func cutAnswersWithHalfTheTokens() {
        let (answer, count) = degraded(.cut, after: 3)
        #expect(answer.text == Self.object(Array(Self.right.prefix(3)) + ["Answer: Why "]))
        #expect(count == 1)
        #expect(SimTokens.count(Self.right[3]) == 7 && SimTokens.count("Answer: Why ") == 3)
    }

    @Test func itemsUpToAfterAreAnsweredRight() {
        for kind in Degradation.Kind.allCases {
            for after in [4, 5, 40] {
                let (answer, count) = degraded(kind, after: after)
                #expect(answer == whole)
                #expect(count == 0)
            }
        }
    }

    // MARK: - Wrong labels

    @Test func wrongLabelsRepeatUnderASeedAndDifferAcrossSeeds() {
        func labels(_ seed: UInt64) -> [BatchAnswer.Value] {
            degraded(.wrongLabel, after: 1, seed: seed).0.entries.map(\.value)
        }
        #expect(labels(7) == labels(7))
        #expect(
            labels(1) == [
                .string(Self.right[0]), .string("Answer: billing"), .string("Answer: other"),
                .string("Answer: bug"),
            ])
        #expect(
            labels(2) == [
                .string(Self.right[0]), .string("Answer: shipping"), .string("Answer: account"),
                .string("Answer: bug"),
            ])
        // The draw hangs on the item's text, not its place: the same text, the same label.
        let moved = [items[3], items[2], items[1]]
        let answer = Degradation(kind: .wrongLabel, after: 1).degrade(
            AnswerComposer().batchAnswer(for: moved), items: moved, seed: 1)
        #expect(
            answer.answer.text
                == #"{"d":"Answer: Why is the sky blue?","c":"Answer: other","b":"Answer: billing"}"#)
    }

    @Test func aWrongLabelIsNeverTheRightAnswer() {
        let item = BatchItem(id: "x", text: "billing")
        #expect(AnswerComposer().singleAnswer(to: item.text) == "Answer: billing")
        let drawn = (0..<200).map {
            Degradation.wrongLabel(for: item, rightAnswer: "Answer: billing", seed: $0)
        }
        #expect(!drawn.contains("Answer: billing"))
        #expect(Set(drawn) == Set(Degradation.labels.dropFirst().map { "Answer: " + $0 }))
    }

    // MARK: - In the sim

    private func call(_ model: String, _ text: String, form: AnswerForm = .text) -> ParsedCall {
        ParsedCall(
            model: model, conversation: SimConversation(messages: [.init(role: "user", texts: [text])]),
            maxTokens: 1000, form: form)
    }

    private func state(_ configure: (inout SimOptions) throws -> Void = { _ in }) throws -> SimState {
        var options = SimOptions()
        options.seed = 7
        options.degradingModels = ["small": Degradation(kind: .wrongLabel, after: 2)]
        try configure(&options)
        return SimState(options: options)
    }

    private static let wrongObject = Self.object(
        [Self.right[0], Self.right[1], "Answer: billing", "Answer: account"])

    @Test func onlyBatchedPromptsToTheNamedModelAreDegraded() throws {
        let sim = try state()
        let (answer, tally) = sim.composeAnswer(call("small", Self.prompt))
        #expect(answer.text == Self.wrongObject)
        #expect(tally == BatchTally(items: 4, degraded: 2))
        let (other, otherTally) = sim.composeAnswer(call("big", Self.prompt))
        #expect(other.text == Self.object(Self.right))
        #expect(otherTally == BatchTally(items: 4))
        let (single, singleTally) = sim.composeAnswer(call("small", Self.texts[3]))
        #expect(single.text == Self.right[3])
        #expect(singleTally == nil)
        #expect(
            sim.composer.fullAnswer(to: Self.prompt) == Self.object(Self.right), "/sim/expected stays right")
    }

    @Test func structuredFormsKeepTheShapeNotTheContent() throws {
        let sim = try state()
        for form in [AnswerForm.schema(required: ["a", "b", "c", "d"]), .tool(name: "record_answers")] {
            let (answer, tally) = sim.composeAnswer(call("small", Self.prompt, form: form))
            #expect(answer.text == Self.wrongObject)
            #expect(tally == BatchTally(items: 4, degraded: 2))
        }
    }

    @Test func damageAndAWeakModelSpoilTheDegradedAnswer() throws {
        let damaged = try state { $0.damage = try DamagePolicy(rate: 1, kinds: [.wrap]) }
        let (answer, tally) = damaged.composeAnswer(call("small", Self.prompt))
        let wrapping = try #require(BatchDamager.wrappings.first { answer.text.hasPrefix($0.prefix) })
        #expect(answer.text == wrapping.prefix + Self.wrongObject + wrapping.suffix)
        #expect(tally == BatchTally(items: 4, damage: [.wrap], degraded: 2))
        let weak = try state { $0.weakModel = true }
        let texts = (0..<30).map { _ in weak.composeAnswer(call("small", Self.prompt)).0.text }
        let degraded = BatchAnswer(
            items: items, answers: [Self.right[0], Self.right[1], "Answer: billing", "Answer: account"])
        #expect(
            Set(texts) == Set(WeakModel.Failure.allCases.map { WeakModel.text(of: degraded, failing: $0) }))
    }

    // MARK: - Options

    @Test func parsesTheFlag() throws {
        let models = try Degradation.models(parsing: [
            "small:wrong-label:4", "qwen2.5:7b:cut:2", "m:neighbour:1",
        ])
        #expect(
            models == [
                "small": Degradation(kind: .wrongLabel, after: 4),
                "qwen2.5:7b": Degradation(kind: .cut, after: 2),
                "m": Degradation(kind: .neighbour, after: 1),
            ])
        #expect(try Degradation.models(parsing: []).isEmpty)
        #expect(
            try Degradation.models(parsing: ["small:wrong-label:slope=1.5%", "big:cut:slope=0.02"])
                == [
                    "small": Degradation(kind: .wrongLabel, shape: .slope(0.015)),
                    "big": Degradation(kind: .cut, shape: .slope(0.02)),
                ])
    }

    // MARK: - The slope

    /// A prompt of `count` distinct items, its right answer, and how a slope of `rate` degrades it.
    private func sloped(_ count: Int, rate: Double, seed: UInt64 = 7) -> (items: [BatchItem], wrong: [Bool]) {
        let items = (0..<count).map { BatchItem(id: "i\($0)", text: "Ticket \($0) of a long prompt.") }
        let whole = AnswerComposer().batchAnswer(for: items)
        let degraded = Degradation(kind: .wrongLabel, shape: .slope(rate)).degrade(
            whole, items: items, seed: seed)
        let wrong = zip(whole.entries, degraded.answer.entries).map { $0.value != $1.value }
        #expect(degraded.degraded == wrong.filter { $0 }.count)
        #expect(degraded.answer.entries.map(\.key) == whole.entries.map(\.key), "the shape is kept")
        return (items, wrong)
    }

    @Test func aSlopeGetsLaterItemsWrongMoreOften() {
        // 1.5 % a position over 2,000 prompts of 16: the first place about 1.5 % wrong, the last 24 %.
        var wrongAt = Array(repeating: 0, count: 16)
        for seed in 0..<2_000 {
            for (index, wrong) in sloped(16, rate: 0.015, seed: UInt64(seed)).wrong.enumerated() where wrong {
                wrongAt[index] += 1
            }
        }
        #expect((10...55).contains(wrongAt[0]), "\(wrongAt)")
        #expect((200...280).contains(wrongAt[7]), "\(wrongAt)")
        #expect((420...540).contains(wrongAt[15]), "\(wrongAt)")
        let share = Double(wrongAt.reduce(0, +)) / 32_000
        #expect(abs(share - 0.1275) < 0.01, "a prompt of 16 about 13 % wrong: \(share)")
        // At a rate of 1 an item is wrong from the first place on.
        #expect(sloped(4, rate: 1).wrong == [true, true, true, true])
    }

    @Test func aSlopesDrawsAreTheSameForTheSameItemPlaceAndSeed() {
        #expect(sloped(16, rate: 0.05).wrong == sloped(16, rate: 0.05).wrong)
        let seeds = (0..<20).map { sloped(16, rate: 0.05, seed: UInt64($0)).wrong }
        #expect(Set(seeds).count > 10, "another seed draws otherwise")
    }

    @Test(arguments: [
        (
            ["small:cut"],
            "--degrading-model expects NAME:KIND:AFTER or NAME:KIND:slope=RATE (e.g. small:wrong-label:4), "
                + "got 'small:cut'"
        ),
        (
            ["small:shuffle:2"],
            "--degrading-model small:shuffle:2: unknown KIND 'shuffle'; expected wrong-label, neighbour or cut"
        ),
        (
            ["small:cut:two"],
            "--degrading-model small:cut:two: expected AFTER, a whole number, or slope=RATE (like slope=1.5%), "
                + "got 'two'"
        ),
        (
            ["small:cut:slope=fast"],
            "--degrading-model small:cut:slope=fast: expected AFTER, a whole number, or slope=RATE (like "
                + "slope=1.5%), got 'slope=fast'"
        ),
        (["s:cut:2", "s:neighbour:3"], "--degrading-model names model 's' more than once"),
    ])
    func rejectsABadFlag(specs: [String], message: String) {
        #expect(throws: SimConfigError(.badOption, message)) { try Degradation.models(parsing: specs) }
    }

    @Test func validationWantsANameAndAPositiveAfter() throws {
        var options = SimOptions()
        options.degradingModels = try Degradation.models(parsing: ["small:cut:0"])
        #expect(
            throws: SimConfigError(.badOption, "--degrading-model small: AFTER must be at least 1, got 0")
        ) {
            try options.validate()
        }
        options.degradingModels = try Degradation.models(parsing: [":cut:2"])
        #expect(throws: SimConfigError(.badOption, "--degrading-model needs a model NAME before :KIND:AFTER"))
        {
            try options.validate()
        }
        options.degradingModels = try Degradation.models(parsing: ["small:cut:slope=0"])
        #expect(
            throws: SimConfigError(
                .badOption,
                "--degrading-model small: the slope's RATE must be more than 0 and at most 1 (100%), got 0.0")
        ) {
            try options.validate()
        }
        options.degradingModels = try Degradation.models(parsing: ["small:cut:1", "big:cut:slope=100%"])
        #expect(throws: Never.self) { try options.validate() }
    }

    @Test(arguments: [
        (["--degrading-model", "small:cut:-1"], "--degrading-model small: AFTER must be at least 1, got -1"),
        (
            ["--degrading-model", "small:late:3"],
            "--degrading-model small:late:3: unknown KIND 'late'; expected wrong-label, neighbour or cut"
        ),
    ])
    func badFlagsAreUsageErrors(arguments: [String], message: String) throws {
        let result = try CommandResult.run(BuiltBinaries.sim, arguments, timeout: 30)
        #expect(result.status == 64)
        #expect(
            result.stderr
                == "Error: \(message)\nUsage: offpeak-sim <options>\n  See 'offpeak-sim --help' for more information.\n"
        )
    }

    // MARK: - Over HTTP

    private func post(_ sim: SimProcess, _ path: String, _ body: [String: Any]) throws -> [String: Any] {
        let data = try sim.request("POST", path, body: try JSONSerialization.data(withJSONObject: body))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    private func messageBody(_ model: String, _ text: String) -> [String: Any] {
        ["model": model, "max_tokens": 1000, "messages": [["role": "user", "content": text]]]
    }

    /// The text of an Anthropic message's first content block.
    private func text(of message: [String: Any]) throws -> String {
        try #require((message["content"] as? [[String: Any]])?.first?["text"] as? String)
    }

    @Test func anthropicLiveAndBatchAnswersAreDegradedForTheNamedModelsOnly() throws {
        let sim = try SimProcess(arguments: [
            "--degrading-model", "small:neighbour:1", "--degrading-model", "qwen2.5:7b:cut:3",
            "--batch-delay", "0",
        ])
        let neighbour = Self.object([Self.right[0], Self.right[0], Self.right[1], Self.right[2]])
        #expect(try text(of: post(sim, "/v1/messages", messageBody("small", Self.prompt))) == neighbour)
        let cut = Self.object(Array(Self.right.prefix(3)) + ["Answer: Why "])
        #expect(try text(of: post(sim, "/v1/messages", messageBody("qwen2.5:7b", Self.prompt))) == cut)
        #expect(
            try text(of: post(sim, "/v1/messages", messageBody("m", Self.prompt))) == Self.object(Self.right))
        #expect(try text(of: post(sim, "/v1/messages", messageBody("small", Self.texts[2]))) == Self.right[2])
        var forced = messageBody("small", Self.prompt)
        forced["tools"] = [["name": "record_answers", "input_schema": ["type": "object"]]]
        forced["tool_choice"] = ["type": "tool", "name": "record_answers"]
        let tool = try #require((try post(sim, "/v1/messages", forced)["content"] as? [[String: Any]])?.first)
        #expect(tool["type"] as? String == "tool_use")
        #expect(
            tool["input"] as? [String: String]
                == ["a": Self.right[0], "b": Self.right[0], "c": Self.right[1], "d": Self.right[2]])
        let expected = try post(sim, "/sim/expected", ["texts": [Self.prompt] + Self.texts])
        #expect(expected["answers"] as? [String] == [Self.object(Self.right)] + Self.right)
        var stats = try sim.stats()
        #expect(stats["batched_items"] as? Int == 16)
        #expect(stats["degraded_items"] as? Int == 7)

        let created = try post(
            sim, "/v1/messages/batches",
            ["requests": [["custom_id": "r1", "params": messageBody("small", Self.prompt)]]])
        let id = try #require(created["id"] as? String)
        let ended = try #require(
            try JSONSerialization.jsonObject(with: try sim.request("GET", "/v1/messages/batches/\(id)"))
                as? [String: Any])
        #expect(ended["processing_status"] as? String == "ended")
        let line = try sim.request("GET", "/v1/messages/batches/\(id)/results")
        let result = try #require(try JSONSerialization.jsonObject(with: line) as? [String: Any])
        let message = try #require((result["result"] as? [String: Any])?["message"] as? [String: Any])
        #expect(try text(of: message) == neighbour)

        _ = try sim.request("POST", "/sim/reset")
        stats = try sim.stats()
        #expect(stats["degraded_items"] as? Int == 0)
        #expect(stats["batched_items"] as? Int == 0)
    }

    @Test func openAIStructuredAnswersKeepTheShapeButNotTheContent() throws {
        let sim = try SimProcess(arguments: ["--degrading-model", "small:wrong-label:2", "--seed", "7"])
        var body = messageBody("small", Self.prompt)
        body["response_format"] = [
            "type": "json_schema",
            "json_schema": [
                "name": "answers", "strict": true,
                "schema": [
                    "type": "object", "required": ["a", "b", "c", "d"],
                    "properties": [
                        "a": ["type": "string"], "b": ["type": "string"], "c": ["type": "string"],
                        "d": ["type": "string"],
                    ],
                ],
            ],
        ]
        for request in [body, messageBody("small", Self.prompt)] {
            let answer = try post(sim, "/v1/chat/completions", request)
            let choice = try #require((answer["choices"] as? [[String: Any]])?.first)
            #expect((choice["message"] as? [String: Any])?["content"] as? String == Self.wrongObject)
            #expect(choice["finish_reason"] as? String == "stop")
        }
        let single = try post(sim, "/v1/chat/completions", messageBody("small", Self.texts[3]))
        let choice = try #require((single["choices"] as? [[String: Any]])?.first)
        #expect((choice["message"] as? [String: Any])?["content"] as? String == Self.right[3])
        let stats = try sim.stats()
        #expect(stats["batched_calls"] as? Int == 2)
        #expect(stats["degraded_items"] as? Int == 4)
    }
}
