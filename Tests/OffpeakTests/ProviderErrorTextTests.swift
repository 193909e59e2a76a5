import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// What a user reads when a provider's address or key is wrong (issue 13, item 5).
@Suite(.ownThreads) struct ProviderErrorTextTests {
    @Test(.timeLimit(.minutes(1))) func aBaseURLWithoutV1NamesTheURLCalledAndSaysToAddIt() throws {
        let sim = try SimProcess()
        let provider = OpenAIProvider(
            apiKey: "none", baseURL: sim.url,
            options: ProviderOptions(retryPolicy: RetryPolicy(maxRetries: 0)),
            logger: Logger(label: "test"))
        let request = CompletionRequest(
            model: "m", messages: [ChatMessage(role: .user, content: "hi")], maxTokens: 5)
        do {
            _ = try provider.complete(request)
            Issue.record("a base URL without /v1 was answered")
        } catch {
            guard case .http(404, let message, let url) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(url == sim.url + "/chat/completions")
            #expect(
                error.description
                    == "provider answered HTTP 404 to \(sim.url)/chat/completions: \(message); OpenAI-compatible "
                    + "servers (llama.cpp, vLLM, Ollama, LiteLLM) answer under /v1: end the base URL with /v1"
            )
        }
    }

    @Test func anAnthropicBaseURLEndingInV1IsNamedAsTheCause() {
        let error = ProviderError.http(
            status: 404, message: "Not Found", url: "http://proxy:4000/v1/v1/messages")
        #expect(
            error.description
                == "provider answered HTTP 404 to http://proxy:4000/v1/v1/messages: Not Found; the base URL ends "
                + "in /v1 and the path adds another (an Anthropic base URL has no /v1)")
        let other = ProviderError.http(status: 500, message: "boom", url: "http://proxy:4000/v1/messages")
        #expect(other.description == "provider answered HTTP 500 to http://proxy:4000/v1/messages: boom")
    }

    @Test func aMissingKeySaysThatAnyValueDoesForALocalServer() throws {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: openai\nbase_url: http://127.0.0.1:9/v1\n")
        try workspace.write("jobs/j.yaml", "kind: prompt\nitems: [a]\ntemplate: \"{{item}}\"\n")
        let run = try workspace.offpeak(["run", "j"], environment: ["OPENAI_API_KEY": nil])
        #expect(run.status == 78)
        #expect(
            run.stderr
                == "offpeak: OPENAI_API_KEY is not set; export it (a server on this machine or a proxy, such as "
                + "llama.cpp, vLLM, Ollama or LiteLLM, takes any value: OPENAI_API_KEY=none), or run against the "
                + "local simulator with --provider sim\n")
    }
}
