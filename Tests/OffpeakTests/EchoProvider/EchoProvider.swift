import Foundation
import Logging

@testable import Offpeak

/// A provider added in the test target the way one is added to offpeak: its own folder (this
/// one), declaring what it can do, its key, its models and their prices, and one registration
/// (`EchoProvider.registration`, put in the registry by `AddedProviderTests`). Nothing else in
/// offpeak names it.
///
/// It answers on this machine, with no server: a free-text answer is the last message read back,
/// and a batched prompt asking for its answer as JSON gets one member per item. Its usage is
/// counted as offpeak estimates tokens.
struct EchoProvider: CompletionProvider {
    let kind: ProviderKind
    let baseURL: String
    var batches: (any BatchAPI)? { nil }

    func complete(_ request: CompletionRequest) throws -> CompletionResponse {
        let asked = request.messages.last?.content ?? ""
        let text: String
        if let keys = request.answerKeys {
            let members = keys.map { "\"\($0)\": \"echo of item \($0)\"" }
            text = "{" + members.joined(separator: ", ") + "}"
        } else {
            text = "echo: " + asked
        }
        let input = TokenEstimator.tokens((request.system ?? "") + asked)
        return CompletionResponse(
            text: text, finishReason: .stop,
            usage: Usage(input: input, output: TokenEstimator.tokens(text)), model: request.model)
    }
}

extension EchoProvider {
    static let capabilities = ProviderCapabilities(
        structured: .init(forms: [.jsonSchema], fromTheStart: true, wire: .responseFormat),
        promptCache: .automatic(minimumTokens: 1024),
        batchesOnThisMachine: false, loopbackInFlight: 2,
        models: .init(fast: "echo-small", balanced: "echo-medium", powerful: "echo-large"),
        environment: .init(
            key: "ECHO_API_KEY", baseURL: ["ECHO_BASE_URL"], defaultBaseURL: "https://echo.invalid/v1"))

    static let prices = """
        {
          "echo-small": {"input_cost_per_token": 1e-07, "output_cost_per_token": 2e-07, "mode": "chat"},
          "echo-medium": {"input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06, "mode": "chat"},
          "echo-large": {"input_cost_per_token": 1e-05, "output_cost_per_token": 2e-05, "mode": "chat"}
        }
        """

    static let registration: ProviderRegistration = .init(
        name: "echo", capabilities: capabilities, prices: prices
    ) { _, baseURL, _, _ in
        EchoProvider(kind: ProviderKind(registration), baseURL: baseURL)
    }
}
