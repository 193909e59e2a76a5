import Foundation
import OffpeakSimKit
import OffpeakTestSupport
import Testing

/// The built `offpeak-sim` serves Anthropic's Message Batches and OpenAI's Batch and Files APIs
/// over HTTP: batches end after `--batch-delay`, answer as the live endpoints do, come back out
/// of order, honour faults and cancels, and are billed once at the end.
@Suite(.ownThreads) struct SimProviderBatchTests {
    let prompts = ["Hi there.", "What is the capital of France? Explain briefly.", "Hello.", "Say yes."]

    private var ids: [String] { prompts.indices.map { "req-\($0)" } }

    private func object(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    private func call(_ sim: SimProcess, _ method: String, _ path: String, _ body: Any? = nil) throws
        -> [String: Any]
    {
        let data = try body.map { try JSONSerialization.data(withJSONObject: $0) }
        return try object(try sim.request(method, path, body: data))
    }

    private func params(_ prompt: String) -> [String: Any] {
        ["model": "m", "max_tokens": 100, "messages": [["role": "user", "content": prompt]]]
    }

    private func createAnthropic(_ sim: SimProcess, ids: [String]? = nil) throws -> [String: Any] {
        let requests = zip(ids ?? self.ids, prompts).map { ["custom_id": $0, "params": params($1)] }
        return try call(sim, "POST", "/v1/messages/batches", ["requests": requests])
    }

    /// JSONL results of an ended Anthropic batch, as decoded lines.
    private func results(_ sim: SimProcess, _ id: String) throws -> [[String: Any]] {
        let text = String(
            decoding: try sim.request("GET", "/v1/messages/batches/\(id)/results"), as: UTF8.self)
        return try text.split(separator: "\n").map { try object(Data($0.utf8)) }
    }

    private func batchStats(_ sim: SimProcess) throws -> (billed: [String: Int], batches: [String: Double]) {
        let stats = try sim.stats()
        let billed = (stats["billed_batch"] as? [String: Any] ?? [:]).compactMapValues {
            ($0 as? NSNumber)?.intValue
        }
        let batches = (stats["batches"] as? [String: Any] ?? [:]).compactMapValues {
            ($0 as? NSNumber)?.doubleValue
        }
        return (billed, batches)
    }

    @Test func anthropicBatchEndsAfterTheDelayWithTheLiveAnswersOutOfOrderBilledOnce() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "1"])
        let live = try prompts.map { try call(sim, "POST", "/v1/messages", params($0)) }
        let liveBilled = try sim.billed()
        let created = try createAnthropic(sim)
        let id = try #require(created["id"] as? String)
        #expect(id.hasPrefix("msgbatch_"))
        #expect(created["type"] as? String == "message_batch")
        #expect(created["processing_status"] as? String == "in_progress")
        #expect((created["request_counts"] as? [String: Int])?["processing"] == 4)
        #expect(created["results_url"] is NSNull)
        var batch = created
        for _ in 0..<100 where batch["processing_status"] as? String != "ended" {
            Thread.sleep(forTimeInterval: 0.1)
            batch = try call(sim, "GET", "/v1/messages/batches/\(id)")
        }
        #expect(batch["processing_status"] as? String == "ended")
        #expect((batch["request_counts"] as? [String: Int])?["succeeded"] == 4)
        #expect(batch["results_url"] as? String == "\(sim.url)/v1/messages/batches/\(id)/results")
        let lines = try results(sim, id)
        let order = lines.compactMap { $0["custom_id"] as? String }
        #expect(order.sorted() == ids)
        #expect(order != ids, "results come out of submission order")
        for line in lines {
            let index = try #require(ids.firstIndex(of: line["custom_id"] as? String ?? ""))
            let result = try #require(line["result"] as? [String: Any])
            #expect(result["type"] as? String == "succeeded")
            let message = try #require(result["message"] as? [String: Any])
            #expect(
                message["content"] as? [[String: String]] == live[index]["content"] as? [[String: String]])
            #expect(message["usage"] as? [String: Int] == live[index]["usage"] as? [String: Int])
        }
        let (billed, batches) = try batchStats(sim)
        #expect(billed == liveBilled, "the batch billed the same tokens as the live calls")
        #expect(try sim.billed() == liveBilled, "live counters keep their meaning")
        #expect(batches["created"] == 1 && batches["ended"] == 1 && batches["succeeded"] == 4)
        #expect(batches["price_factor"] == 0.5)
        let again = try results(sim, id).map {
            try JSONSerialization.data(withJSONObject: $0, options: .sortedKeys)
        }
        let first = try lines.map { try JSONSerialization.data(withJSONObject: $0, options: .sortedKeys) }
        #expect(again == first)
        #expect(try batchStats(sim).billed == liveBilled, "downloading again bills nothing")
    }

    @Test func invalidOrRepeatedCustomIDsAreRefused() throws {
        let sim = try SimProcess()
        for bad in [
            ["has space", "b", "c", "d"], [String(repeating: "a", count: 65), "b", "c", "d"],
            ["a", "a", "c", "d"],
        ] {
            let answer = try createAnthropic(sim, ids: bad)
            #expect(
                (answer["error"] as? [String: Any])?["type"] as? String == "invalid_request_error", "\(bad)")
        }
        #expect(try batchStats(sim).batches["created"] == 0)
    }

    @Test func targetedFaultsEndRequestsUnbilled() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "0"])
        _ = try call(
            sim, "POST", "/sim/batch-faults",
            ["errored": ["req-0"], "expired": ["req-1"], "canceled": ["req-2"]])
        let liveLast = try call(sim, "POST", "/v1/messages", params(prompts[3]))
        let liveBilled = try sim.billed()
        let id = try #require(try createAnthropic(sim)["id"] as? String)
        let batch = try call(sim, "GET", "/v1/messages/batches/\(id)")
        #expect(
            batch["request_counts"] as? [String: Int]
                == ["processing": 0, "succeeded": 1, "errored": 1, "expired": 1, "canceled": 1])
        var types: [String: String] = [:]
        for line in try results(sim, id) {
            types[line["custom_id"] as? String ?? ""] = (line["result"] as? [String: Any])?["type"] as? String
        }
        #expect(types == ["req-0": "errored", "req-1": "expired", "req-2": "canceled", "req-3": "succeeded"])
        #expect(try batchStats(sim).billed == liveBilled, "only the answered request is billed")
        #expect(liveLast["usage"] as? [String: Any] != nil)
    }

    @Test func errorRateFailsEveryRequestTheSameWayUnderASeed() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "0", "--batch-error-rate", "1", "--seed", "7"])
        let id = try #require(try createAnthropic(sim)["id"] as? String)
        let batch = try call(sim, "GET", "/v1/messages/batches/\(id)")
        #expect((batch["request_counts"] as? [String: Int])?["errored"] == 4)
        let error = try #require(
            (try results(sim, id).first?["result"] as? [String: Any])?["error"] as? [String: Any])
        #expect((error["error"] as? [String: Any])?["type"] as? String == "api_error")
        #expect(try batchStats(sim).billed.values.reduce(0, +) == 0)
    }

    /// The ends of every request, by `custom_id`, of one batch on a sim started with `arguments`.
    private func ends(_ arguments: [String]) throws -> [String: String] {
        let sim = try SimProcess(arguments: ["--batch-delay", "0"] + arguments)
        let many = (0..<40).map { "id-\($0)" }
        let requests = many.map { ["custom_id": $0, "params": params("Hello.")] }
        let id = try #require(
            try call(sim, "POST", "/v1/messages/batches", ["requests": requests])["id"] as? String)
        _ = try call(sim, "GET", "/v1/messages/batches/\(id)")
        var ends: [String: String] = [:]
        for line in try results(sim, id) {
            ends[line["custom_id"] as? String ?? ""] = (line["result"] as? [String: Any])?["type"] as? String
        }
        return ends
    }

    @Test func faultRatesEndRequestsTheSameWayPerCustomIDUnderASeed() throws {
        #expect(Set(try ends(["--batch-expire-rate", "1"]).values) == ["expired"])
        #expect(Set(try ends(["--batch-cancel-rate", "1"]).values) == ["canceled"])
        let mixed = [
            "--seed", "11", "--batch-error-rate", "0.3", "--batch-expire-rate", "0.3", "--batch-cancel-rate",
            "0.3",
        ]
        let first = try ends(mixed)
        #expect(Set(first.values) == ["succeeded", "errored", "expired", "canceled"])
        #expect(try ends(mixed) == first)
    }

    @Test func batchFaultRatesMustSumToAtMostOne() {
        var options = SimOptions()
        options.batchErrorRate = 0.6
        options.batchExpireRate = 0.6
        #expect(throws: SimConfigError.self) { try options.validate() }
        options.batchExpireRate = 0.4
        #expect(throws: Never.self) { try options.validate() }
    }

    @Test func cancelEndsTheRequestsNotYetDone() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "600"])
        let id = try #require(try createAnthropic(sim)["id"] as? String)
        let canceling = try call(sim, "POST", "/v1/messages/batches/\(id)/cancel")
        #expect(canceling["processing_status"] as? String == "canceling")
        #expect(canceling["cancel_initiated_at"] is String)
        let ended = try call(sim, "GET", "/v1/messages/batches/\(id)")
        #expect(ended["processing_status"] as? String == "ended")
        #expect((ended["request_counts"] as? [String: Int])?["canceled"] == 4)
        #expect(
            try results(sim, id).allSatisfy { ($0["result"] as? [String: String])?["type"] == "canceled" })
        #expect(try batchStats(sim).billed.values.reduce(0, +) == 0)
    }

    @Test func listPagesNewestFirst() throws {
        let sim = try SimProcess()
        let made = try (0..<3).map { _ in try #require(try createAnthropic(sim)["id"] as? String) }
        let first = try call(sim, "GET", "/v1/messages/batches?limit=2")
        #expect(
            (first["data"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [made[2], made[1]])
        #expect(first["has_more"] as? Bool == true)
        #expect(first["first_id"] as? String == made[2] && first["last_id"] as? String == made[1])
        let second = try call(sim, "GET", "/v1/messages/batches?limit=2&after_id=\(made[1])")
        #expect((second["data"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [made[0]])
        #expect(second["has_more"] as? Bool == false)
    }
}
