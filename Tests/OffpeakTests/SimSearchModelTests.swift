import Foundation
import OffpeakTestSupport
import Testing

@testable import OffpeakSimKit

/// offpeak-sim's chat completions refuse what OpenAI refuses around web search:
/// `web_search_options` to a model that is not a search model, and `temperature` (`top_p`, `n`,
/// the penalties) to one that is, with a 400 in OpenAI's error shape.
@Suite(.ownThreads) struct SimSearchModelTests {
    static let message = #"[{"role":"user","content":"News?"}]"#

    private func refusal(_ json: String) -> String? {
        do {
            _ = try OpenAIRoutes().parse(Data(json.utf8))
            return nil
        } catch let error as SimAPIError {
            return error.kind == .invalidRequest ? error.message : "\(error.kind): \(error.message)"
        } catch {
            return "\(error)"
        }
    }

    @Test func onlyASearchModelTakesWebSearchOptions() throws {
        #expect(
            refusal(#"{"model":"gpt-4.1","messages":\#(Self.message),"web_search_options":{}}"#)
                == "Web search options not supported with this model.")
        #expect(refusal(#"{"model":"gpt-4.1","messages":\#(Self.message),"temperature":0.2}"#) == nil)
        let call = try OpenAIRoutes().parse(
            Data(
                #"{"model":"gpt-4o-mini-search-preview","messages":\#(Self.message),"web_search_options":{}}"#
                    .utf8))
        #expect(call.searches.count == 1)
        // A search model searches without the field too, but offpeak counts only what it asked.
        #expect(refusal(#"{"model":"gpt-5-search-api","messages":\#(Self.message)}"#) == nil)
    }

    @Test func aSearchModelRefusesSamplingArguments() {
        let model = #""model":"gpt-4o-search-preview","messages":\#(Self.message),"web_search_options":{}"#
        #expect(
            refusal("{\(model),\"temperature\":0.2}")
                == "Model incompatible request argument supplied: temperature")
        #expect(
            refusal("{\(model),\"top_p\":1,\"temperature\":0,\"presence_penalty\":0,\"frequency_penalty\":0}")
                == "Model incompatible request arguments supplied: frequency_penalty, presence_penalty, "
                + "temperature, top_p")
    }

    /// Over HTTP: a 400 with OpenAI's `{"error": {"message", "type", "param", "code"}}`.
    @Test func theRefusalsAre400sInOpenAIsShape() throws {
        let sim = try SimProcess()
        func post(_ body: String) throws -> (status: Int32, error: [String: Any]) {
            let curl = URL(fileURLWithPath: "/usr/bin/curl")
            let result = try CommandResult.run(
                curl,
                [
                    "-s", "-o", "/dev/stdout", "-w", "\n%{http_code}", "-X", "POST",
                    sim.url + "/v1/chat/completions", "-H", "content-type: application/json",
                    "-H", "authorization: Bearer sk-test", "--data-binary", body,
                ], timeout: 10)
            let lines = result.stdout.split(separator: "\n")
            let status = Int32(lines.last ?? "") ?? 0
            let json = try JSONSerialization.jsonObject(with: Data(lines.dropLast().joined().utf8))
            return (status, (json as? [String: Any])?["error"] as? [String: Any] ?? [:])
        }
        let unsupported = try post(
            #"{"model":"gpt-4.1","messages":\#(Self.message),"web_search_options":{}}"#)
        #expect(unsupported.status == 400)
        #expect(
            unsupported.error["message"] as? String == "Web search options not supported with this model.")
        #expect(unsupported.error["type"] as? String == "invalid_request_error")
        #expect(unsupported.error["param"] is NSNull && unsupported.error["code"] is NSNull)
        #expect(unsupported.error.count == 4)

        let sampled = try post(
            #"{"model":"gpt-4o-search-preview","messages":\#(Self.message),"web_search_options":{},"temperature":0.2}"#
        )
        #expect(sampled.status == 400)
        #expect(
            sampled.error["message"] as? String == "Model incompatible request argument supplied: temperature"
        )
        #expect(sampled.error["type"] as? String == "invalid_request_error")
        #expect(sampled.error["param"] is NSNull && sampled.error["code"] is NSNull)
        let billed = try sim.billed()
        #expect(billed["input_tokens"] == 0 && billed["web_search_requests"] == 0, "a refusal bills nothing")
    }
}
