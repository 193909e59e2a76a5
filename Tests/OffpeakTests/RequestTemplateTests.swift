import Foundation
import Testing

@testable import Offpeak

/// A job's requests made from a template (`offpeak submit`) are byte for byte the requests made
/// whole: the same payload and the same cache key, whatever the request holds.
struct RequestTemplateTests {
    static let messages = [
        "", "What is a tide?", CanonicalJSONWriterTests.awkwardText,
        String(repeating: "long text, no escapes. ", count: 300), "ends with a quote \"", "\\",
    ]

    @Test(arguments: CanonicalJSONWriterTests.requests.filter { !$0.messages.isEmpty })
    func madeFromATemplateIsMadeWhole(_ request: CompletionRequest) throws {
        for provider in [ProviderKind.anthropic, .sim] {
            let template = try #require(RequestTemplate(provider: provider, request: request))
            for message in Self.messages {
                var whole = request
                whole.messages[whole.messages.count - 1].content = message
                let made = template.payloadAndKey(userMessage: message)
                let expected = RequestPlanner.payloadAndKey(provider: provider, request: whole)
                #expect(made.payload == expected.payload)
                #expect(made.cacheKey == expected.cacheKey)
                #expect(made.cacheKey == RequestPlanner.cacheKey(provider: provider, request: whole))
            }
        }
    }

    /// No message, or a number JSON cannot hold: no template (each request is made whole).
    @Test func requestsATemplateCannotMake() {
        #expect(
            RequestTemplate(
                provider: .sim, request: CompletionRequest(model: "m", messages: [], maxTokens: 1))
                == nil)
        let notFinite = CompletionRequest(
            model: "m", messages: [ChatMessage(role: .user, content: "x")], maxTokens: 1,
            temperature: .infinity)
        #expect(RequestTemplate(provider: .sim, request: notFinite) == nil)
    }

    /// The system prompt's place in a canonical payload, found from the end, with and without the
    /// length of one seen before; none when the request has no system prompt.
    @Test(
        arguments: CanonicalJSONWriterTests.requests + [
            CompletionRequest(
                model: "m", system: #"a "quoted" ,"system":" inside, and a \ backslash"#,
                messages: [ChatMessage(role: .user, content: #","system":"not this one""#)], maxTokens: 1,
                stop: [#"","system":""#]),
            CompletionRequest(
                model: "m", system: "", messages: [ChatMessage(role: .user, content: "x")], maxTokens: 1,
                temperature: -1.5e-7, topP: 1e21),
            CompletionRequest(model: "m", system: nil, messages: [], maxTokens: 1, topP: 0.5, stop: ["s"]),
        ])
    func theSystemPromptIsFoundInPlace(_ request: CompletionRequest) throws {
        let json = try #require(request.canonicalJSON)
        var expected: [UInt8]?
        if let system = request.system {
            var escaped: [UInt8] = []
            CanonicalJSONWriter.appendEscaping(system, to: &escaped)
            expected = escaped
        }
        for length in [nil, expected?.count, 3, 100_000] {
            let found = json.withUnsafeBufferPointer { json in
                CompletionRequest.systemRange(inCanonicalJSON: json, length: length).map { Array(json[$0]) }
            }
            #expect(found == expected, "length hint \(String(describing: length))")
        }
    }
}
