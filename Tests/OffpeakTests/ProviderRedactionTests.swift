import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// What a provider hands back (errors, answers, ids) is redacted of the keys it holds and of every
/// credential shape, against the real sim's echo faults and through the real `ProviderFactory`.
@Suite(.ownThreads) struct ProviderRedactionTests {
    static let anthropicKey = "sk-ant-MARKER-a1b2c3d4e5f6"
    static let openAIKey = "MARKERopenai-0011223344"
    static let environment = ["ANTHROPIC_API_KEY": anthropicKey, "OPENAI_API_KEY": openAIKey]
    let logger = Logger(label: "test")

    func provider(_ kind: ProviderKind, sim: SimProcess) throws -> any CompletionProvider {
        var config = WorkspaceConfig()
        config.provider = kind
        config.baseURL = kind == .openai ? sim.url + "/v1" : sim.url
        config.maxRetries = 0
        return try ProviderFactory.make(config: config, environment: Self.environment, logger: logger)
    }

    static func request(_ text: String) -> CompletionRequest {
        CompletionRequest(model: "m", messages: [ChatMessage(role: .user, content: text)], maxTokens: 50)
    }

    /// The error a call must end in.
    func failure(_ provider: any CompletionProvider, _ text: String = "Hello there.") throws -> ProviderError
    {
        do {
            let answer = try provider.complete(Self.request(text))
            Issue.record("expected an error, got \(answer)")
            throw ProviderError.badResponse("no error")
        } catch let error as ProviderError {
            return error
        }
    }

    @Test(
        arguments: [ProviderKind.anthropic, .openai], ["echo400", "echo429", "echo500", "echo502", "echo529"])
    func anEchoedRequestLeavesNoKeyInTheError(kind: ProviderKind, fault: String) throws {
        let sim = try SimProcess(arguments: ["--fault-rate", "\(fault)=1", "--retry-after", "0"])
        let error = try failure(try provider(kind, sim: sim), "Please keep \(Self.anthropicKey) safe.")
        let text = error.description
        #expect(!text.contains("MARKER"), "\(text)")
        let header = kind == .anthropic ? "x-api-key: [redacted]" : "authorization: Bearer [redacted]"
        #expect(text.contains(header), "\(text)")
        #expect(
            text.contains(#"body={"max_tokens":50,"messages":[{"content":"Please keep [redacted] safe.""#))
    }

    @Test(arguments: [ProviderKind.anthropic, .openai])
    func answerTextIsRedacted(kind: ProviderKind) throws {
        let sim = try SimProcess()
        let answer = try provider(kind, sim: sim).complete(
            Self.request("The key \(Self.openAIKey) and x-api-key: abc123def456 were leaked. More."))
        #expect(answer.text == "Answer: The key [redacted] and x-api-key: [redacted] were leaked.")
        #expect(answer.id?.contains("sim") == true, "ids that are not keys stay as they are")
    }

    @Test func aResponseIsRedactedWhateverItsField() {
        let redactor = Redactor(environment: Self.environment)
        let answer = CompletionResponse(
            text: "k=\(Self.openAIKey)", finishReason: .stop, usage: Usage(),
            model: "model-\(Self.openAIKey)",
            id: "msg_\(Self.anthropicKey)")
        let clean = answer.redacted(by: redactor)
        #expect(clean.text == "k=[redacted]")
        #expect(clean.model == "model-[redacted]")
        #expect(clean.id == "msg_[redacted]")
        let errors: [ProviderError] = [
            .unreachable("Could not resolve host: \(Self.openAIKey).invalid"),
            .truncated("x \(Self.openAIKey)"),
            .http(status: 500, message: Self.openAIKey), .badResponse("x-api-key: \(Self.anthropicKey)"),
        ]
        for error in errors {
            #expect(!error.redacted(by: redactor).description.contains("MARKER"))
        }
    }

    /// A body that is not JSON is shown as its first 200 characters: a key at the cut must not
    /// leave its first half behind.
    @Test func aKeyCutAtTheSnippetsEndLeavesNothingBehind() {
        let redactor = Redactor(environment: Self.environment)
        let body = String(repeating: "ab ", count: 60) + Self.openAIKey + " trailing"
        let details = ProviderTransport.errorDetails(in: Data(body.utf8), redactor: redactor)
        #expect(details.message == String(repeating: "ab ", count: 60) + "[redacted] trailing")
        #expect(throws: ProviderError.badResponse("answer is not JSON: " + details.message)) {
            try AnthropicProvider.parseResponse(Data(body.utf8), for: Self.request("x"), redactor: redactor)
        }
        let long = String(repeating: "abc ", count: 49) + Self.openAIKey
        let cut = ProviderTransport.snippet(of: Data(long.utf8), redactor: redactor)
        #expect(cut == String(repeating: "abc ", count: 49) + "[red")
    }

    /// libcurl's messages quote the host: one that holds the key is redacted too.
    @Test func aTransportErrorQuotingTheURLIsRedacted() throws {
        let host = "sk-ant-marker0123456789"
        var config = WorkspaceConfig()
        config.baseURL = "http://\(host).invalid"
        config.maxRetries = 0
        config.connectTimeout = 5
        let provider = try ProviderFactory.make(
            config: config, environment: ["ANTHROPIC_API_KEY": host], logger: logger)
        let error = try failure(provider)
        #expect(error == .unreachable("Could not resolve host: [redacted].invalid"))
    }
}
