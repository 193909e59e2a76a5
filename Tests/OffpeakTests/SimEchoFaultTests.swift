import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak
@testable import OffpeakSimKit

/// The sim's echo faults: the status asked for, in each endpoint's error shape, with a message
/// that repeats the request's headers (the key among them) and its body.
@Suite(.ownThreads) struct SimEchoFaultTests {
    static let key = "sk-ant-ECHOTEST-0123456789"

    /// One raw call to the sim, with the key in the header each API uses.
    static func call(_ sim: SimProcess, path: String, fault: String?) throws -> HTTPResponse {
        var headers = [(name: "content-type", value: "application/json")]
        if path.hasSuffix("/messages") {
            headers.append((name: "x-api-key", value: key))
        } else {
            headers.append((name: "authorization", value: "Bearer \(key)"))
        }
        if let fault { headers.append((name: "x-sim-fault", value: fault)) }
        let body = #"{"model":"m","max_tokens":20,"messages":[{"role":"user","content":"Hello there."}]}"#
        return try HTTPClient().send(
            HTTPRequest(method: "POST", url: sim.url + path, headers: headers, body: Array(body.utf8)))
    }

    static func message(_ response: HTTPResponse) throws -> String {
        let object = try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
        let error = try #require(object["error"] as? [String: Any])
        return try #require(error["message"] as? String)
    }

    @Test(arguments: [
        ("/v1/messages", "echo400", 400), ("/v1/messages", "echo429", 429), ("/v1/messages", "echo500", 500),
        ("/v1/messages", "echo502", 502), ("/v1/messages", "echo529", 529),
        ("/v1/chat/completions", "echo400", 400), ("/v1/chat/completions", "echo429", 429),
        ("/v1/chat/completions", "echo502", 502), ("/v1/chat/completions", "echo529", 503),
    ])
    func echoFaultsRepeatTheRequestInTheError(path: String, fault: String, status: Int) throws {
        let sim = try SimProcess(arguments: ["--retry-after", "0"])
        let response = try Self.call(sim, path: path, fault: fault)
        #expect(response.status == status)
        let message = try Self.message(response)
        let header =
            path.hasSuffix("/messages") ? "x-api-key: \(Self.key)" : "authorization: Bearer \(Self.key)"
        let lines = message.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("echo: ") == true)
        #expect(lines.contains(header) || lines.first == "echo: " + header, "\(message)")
        #expect(lines.contains("x-sim-fault: \(fault)"))
        #expect(
            lines.last
                == #"body={"model":"m","max_tokens":20,"messages":[{"role":"user","content":"Hello there."}]}"#
        )
        #expect(response.header("retry-after") == (status == 429 ? "0" : nil))
    }

    @Test func aRateGivesEveryCallTheEchoAndTheQueueOneCall() throws {
        #expect(try FaultRates(parsing: "echo400=1").fault(forDraw: 0.999) == .echoBadRequest)
        #expect(try SimFault(name: "ECHO529") == .echoOverloaded)
        let sim = try SimProcess(arguments: ["--fault-rate", "echo502=1"])
        for _ in 0..<3 { #expect(try Self.call(sim, path: "/v1/messages", fault: nil).status == 502) }
        let faults = try #require(try sim.stats()["faults"] as? [String: Int])
        #expect(faults["echo502"] == 3)

        let queued = try SimProcess()
        try queued.queueFaults(["echo400"])
        #expect(try Self.call(queued, path: "/v1/chat/completions", fault: nil).status == 400)
        #expect(try Self.call(queued, path: "/v1/chat/completions", fault: nil).status == 200)
    }
}

/// The sim bills like a provider that runs a call to its end whether or not its caller waited.
@Suite(.ownThreads) struct SimCallerLeftTests {
    @Test func anAnswerWhoseCallerLeftIsStillBilled() throws {
        let sim = try SimProcess(arguments: ["--latency-ms", "800"])
        let body = #"{"model":"m","max_tokens":20,"messages":[{"role":"user","content":"Hello there."}]}"#
        let request = HTTPRequest(
            method: "POST", url: sim.url + "/v1/messages",
            headers: [
                (name: "content-type", value: "application/json"), (name: "x-api-key", value: "sk-ant-x"),
            ],
            body: Array(body.utf8), timeout: 0.2)
        #expect(throws: (any Error).self) { try HTTPClient().send(request) }
        var okCalls = 0
        for _ in 0..<40 where okCalls == 0 {
            Thread.sleep(forTimeInterval: 0.1)
            okCalls = try sim.stats()["ok_calls"] as? Int ?? 0
        }
        #expect(okCalls == 1, "billed though its caller gave up at 0.2 s")
        #expect(try sim.stats()["calls"] as? Int == 1)
    }
}
