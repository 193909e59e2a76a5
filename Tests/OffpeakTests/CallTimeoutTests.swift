import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// A call's timeout follows its expected duration (issue 13, item 3): the model's measured speed
/// and the tokens asked, the whole `max_tokens` written at worst, never below `http.timeout`; the
/// window planner asks the same estimate for the expected case.
@Suite(.ownThreads) struct CallTimeoutTests {
    let timeouts = CallTimeout(floor: 120, connect: 10)
    /// A small model on CPU: 4 tokens a second.
    let slowLocal = LatencyEstimate(msPerCall: 90_000, msPerWeightedToken: 250, outputTokens: 400, samples: 3)

    @Test func aModelNotMeasuredYetGetsTheConfiguredTimeout() {
        #expect(timeouts.raised(model: "m", inputTokens: 800, maxOutput: 1000, speed: nil) == nil)
    }

    @Test func aSlowModelsLongAnswerGetsItsWorstCaseWithAMargin() {
        // 250 ms x (1000 + 800 / 8) tokens = 275 s at most; x1.5 and 10 s to connect: 422.5 s.
        let raised = timeouts.raised(model: "qwen", inputTokens: 800, maxOutput: 1000, speed: slowLocal)
        #expect(
            raised
                == CallTimeout.Raised(
                    seconds: 423,
                    why: "call to qwen may take 423 s, over http.timeout's 120 s: at its measured 250 ms per "
                        + "token, it sends 800 tokens and may write up to 1000, 275 s at most, x1.5 plus 10 s "
                        + "to connect"))
    }

    @Test func aCallTheFloorCoversKeepsIt() {
        let fastAPI = LatencyEstimate(msPerCall: 2_000, msPerWeightedToken: 10, outputTokens: 300, samples: 9)
        // 10 ms x 1100 tokens = 11 s; x1.5 + 10 s = 26.5 s, under 120 s.
        #expect(timeouts.raised(model: "m", inputTokens: 800, maxOutput: 1000, speed: fastAPI) == nil)
        // The slow model's short answer: 250 ms x (20 + 10) = 7.5 s; 21.25 s, under 120 s.
        #expect(timeouts.raised(model: "m", inputTokens: 80, maxOutput: 20, speed: slowLocal) == nil)
    }

    @Test func anAbsurdSpeedIsCappedAtADay() {
        var absurd = slowLocal
        absurd.msPerWeightedToken = 1e300
        #expect(
            timeouts.raised(model: "m", inputTokens: 800, maxOutput: 1000, speed: absurd)?.seconds
                == CallTimeout.longest)
        absurd.msPerWeightedToken = .infinity
        #expect(timeouts.raised(model: "m", inputTokens: 800, maxOutput: 1000, speed: absurd) == nil)
    }

    /// One duration function: the window planner's expected case takes the model's typical answer
    /// (half again as long, never more than allowed), the timeout's worst case the whole
    /// `max_tokens`.
    @Test func theWindowPlannerAndTheTimeoutAskTheSameEstimate() {
        #expect(slowLocal.seconds(input: 800, output: 600) == 175)
        #expect(slowLocal.expectedSeconds(input: 800, maxOutput: 1000) == 175)
        #expect(slowLocal.worstSeconds(input: 800, maxOutput: 1000) == 275)
        #expect(slowLocal.expectedSeconds(input: 800, maxOutput: 300) == 100)
        #expect(slowLocal.worstSeconds(input: 800, maxOutput: 300) == 100)
    }

    /// The timeout is the call's, not the provider's: a provider configured with 1 s waits out an
    /// answer that takes longer when the call is given more, and the answer comes in one attempt.
    @Test(.timeLimit(.minutes(1))) func aProviderCallWaitsAsLongAsItsTimeoutSays() throws {
        // "Answer: " and a 40-token sentence, 30 ms a token: about 1.3 s.
        let sim = try SimProcess(arguments: ["--ms-per-output-token", "30"])
        let provider = AnthropicProvider(
            apiKey: "sim", baseURL: sim.url, kind: .sim,
            options: ProviderOptions(
                connectTimeout: 5, requestTimeout: 1, retryPolicy: RetryPolicy(maxRetries: 1)),
            logger: Logger(label: "test"))
        let sentence = String(repeating: "word ", count: 32) + "end."
        let request = CompletionRequest(
            model: "m", messages: [ChatMessage(role: .user, content: sentence)], maxTokens: 100)
        let reply = provider.call(request, timeout: 20, lane: .live)
        let answer = try reply.answer.get()
        #expect(answer.finishReason == .stop)
        #expect(reply.attempts == 1)
        #expect(try sim.stats()["calls"] as? Int == 1)
    }
}
