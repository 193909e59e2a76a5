import Foundation
import Testing

@testable import Offpeak

/// The hand-written canonical JSON of a request is `JSONEncoder`'s, byte for byte: a drift would
/// change every cache key and every stored payload.
struct CanonicalJSONWriterTests {
    /// Every ASCII byte, control characters and escapes included, and text beyond ASCII.
    static let awkwardText: String = {
        var text = ""
        for byte in 0..<0x80 { text.unicodeScalars.append(Unicode.Scalar(UInt8(byte))) }
        return text + "é€😀\u{2028}\u{2029}\u{FEFF}\u{85} a/b \\\" \"quoted\"\n\ttabbed"
    }()

    static let requests: [CompletionRequest] = {
        var structured = CompletionRequest(
            model: "gpt-4o/mini", system: awkwardText, messages: [ChatMessage(role: .user, content: "x")],
            maxTokens: 1, temperature: 1e-7, topP: 1e21, stop: ["\n\n", "END"], cacheSystemPrompt: true,
            answerKeys: ["a", "b\"c"])
        structured.answerForm = .jsonObject
        return [
            CompletionRequest(model: "m", messages: [], maxTokens: 0),
            CompletionRequest(
                model: "claude-haiku-4-5", system: "Answer in one line.",
                messages: [ChatMessage(role: .user, content: awkwardText)], maxTokens: 40, temperature: 0),
            CompletionRequest(
                model: "claude-haiku-4-5", system: nil,
                messages: [
                    ChatMessage(role: .user, content: "q"), ChatMessage(role: .assistant, content: "a"),
                    ChatMessage(
                        role: .user, content: String(repeating: "long text, no escapes. ", count: 300)),
                ],
                maxTokens: -5, temperature: 0.7, topP: 0.30000000000000004, stop: [], cacheSystemPrompt: false
            ),
            structured,
            CompletionRequest(
                model: "m", messages: [ChatMessage(role: .user, content: "12345678\"12345678\\1234567\u{1}")],
                maxTokens: Int.max, temperature: -0.0, topP: 123_456_789.123),
        ]
    }()

    @Test(arguments: requests)
    func writesWhatJSONEncoderWrites(_ request: CompletionRequest) {
        #expect(request.canonicalText == CanonicalJSON.text(request))
    }

    /// Random text of every kind of byte run, at every alignment of the word-at-a-time scan.
    @Test func randomTextIsEscapedAsJSONEncoderDoes() {
        var generator = SystemRandomNumberGenerator()
        let pieces = ["a", "é", "\"", "\\", "\n", "\u{1}", "\u{1F}", " ", "/", "\u{7F}", "😀", "\t", "\r"]
        for _ in 0..<500 {
            let length = Int.random(in: 0..<40, using: &generator)
            let text = (0..<length).map { _ in pieces.randomElement(using: &generator) ?? "" }.joined()
            let request = CompletionRequest(
                model: "m", messages: [ChatMessage(role: .user, content: text)], maxTokens: 1)
            #expect(request.canonicalText == CanonicalJSON.text(request))
        }
    }

    /// A number `JSONEncoder` refuses gives the text it gives (empty), and so the same cache key.
    @Test func aNonFiniteNumberGivesTheOldKey() {
        let request = CompletionRequest(model: "m", messages: [], maxTokens: 1, temperature: .nan)
        #expect(request.canonicalText == CanonicalJSON.text(request))
        #expect(
            RequestPlanner.cacheKey(provider: .sim, request: request)
                == SHA256.hex("sim\n" + CanonicalJSON.text(request)))
    }

    /// The key is the SHA-256 of the provider, a newline and the JSON without the prefix-cache
    /// marker, as it always was; `payloadAndKey` gives the same key either way.
    @Test(arguments: requests)
    func keysAreWhatTheyWere(_ request: CompletionRequest) {
        var unmarked = request
        unmarked.cacheSystemPrompt = false
        let key = SHA256.hex("anthropic\n" + CanonicalJSON.text(unmarked))
        #expect(RequestPlanner.cacheKey(provider: .anthropic, request: request) == key)
        let both = RequestPlanner.payloadAndKey(provider: .anthropic, request: request)
        #expect(both.cacheKey == key)
        #expect(both.payload == CanonicalJSON.text(request))
    }
}
