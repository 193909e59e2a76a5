import Foundation
import OffpeakTestSupport
import Testing

/// The built `offpeak-sim` takes an OpenAI batch as the Files and Batch APIs do: a JSONL upload,
/// a batch over it, and an output file whose lines answer as the live endpoint would.
@Suite(.ownThreads) struct SimOpenAIBatchTests {
    let prompts = ["Hi there.", "What is the capital of France? Explain briefly.", "Hello."]

    private func object(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    private func call(_ sim: SimProcess, _ method: String, _ path: String, _ body: Any? = nil) throws
        -> [String: Any]
    {
        let data = try body.map { try JSONSerialization.data(withJSONObject: $0) }
        return try object(try sim.request(method, path, body: data))
    }

    private func body(_ prompt: String, model: String = "m") -> [String: Any] {
        ["model": model, "messages": [["role": "user", "content": prompt]]]
    }

    /// Uploads JSONL lines with `curl -F`, as `multipart/form-data`.
    private func upload(_ sim: SimProcess, _ lines: [[String: Any]]) throws -> [String: Any] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "simbatch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("input.jsonl")
        var data = Data()
        for line in lines {
            data.append(try JSONSerialization.data(withJSONObject: line))
            data.append(UInt8(ascii: "\n"))
        }
        try data.write(to: file)
        let result = try CommandResult.run(
            URL(fileURLWithPath: "/usr/bin/curl"),
            ["-s", "-F", "purpose=batch", "-F", "file=@\(file.path)", sim.url + "/v1/files"], timeout: 10)
        let answer = try object(Data(result.stdout.utf8))
        #expect(answer["bytes"] as? Int == data.count)
        return answer
    }

    private func lines(_ models: [String]) -> [[String: Any]] {
        zip(prompts, models).enumerated().map { index, pair in
            [
                "custom_id": "r\(index)", "method": "POST", "url": "/v1/chat/completions",
                "body": body(pair.0, model: pair.1),
            ]
        }
    }

    private func create(_ sim: SimProcess, file: String) throws -> [String: Any] {
        try call(
            sim, "POST", "/v1/batches",
            [
                "input_file_id": file, "endpoint": "/v1/chat/completions", "completion_window": "24h",
                "metadata": ["k": "v"],
            ])
    }

    @Test func batchWritesAnOutputFileOfLiveAnswersOutOfOrder() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "0"])
        let live = try prompts.map { try call(sim, "POST", "/v1/chat/completions", body($0)) }
        let liveBilled = try sim.billed()
        let file = try upload(sim, lines(["m", "m", "m"]))
        let fileID = try #require(file["id"] as? String)
        #expect(
            fileID.hasPrefix("file-") && file["object"] as? String == "file"
                && file["purpose"] as? String == "batch")
        let created = try create(sim, file: fileID)
        #expect(created["object"] as? String == "batch" && created["status"] as? String == "validating")
        let id = try #require(created["id"] as? String)
        let done = try call(sim, "GET", "/v1/batches/\(id)")
        #expect(done["status"] as? String == "completed")
        #expect(done["request_counts"] as? [String: Int] == ["total": 3, "completed": 3, "failed": 0])
        #expect(done["metadata"] as? [String: String] == ["k": "v"])
        #expect(done["error_file_id"] is NSNull)
        let outputID = try #require(done["output_file_id"] as? String)
        let output = String(decoding: try sim.request("GET", "/v1/files/\(outputID)/content"), as: UTF8.self)
        let rows = try output.split(separator: "\n").map { try object(Data($0.utf8)) }
        let order = rows.compactMap { $0["custom_id"] as? String }
        #expect(order.sorted() == ["r0", "r1", "r2"] && order != ["r0", "r1", "r2"])
        for row in rows {
            let index = try #require(Int((row["custom_id"] as? String ?? "").dropFirst()))
            let response = try #require(row["response"] as? [String: Any])
            #expect(response["status_code"] as? Int == 200 && row["error"] is NSNull)
            let answer = try #require(response["body"] as? [String: Any])
            let choice = (answer["choices"] as? [[String: Any]])?.first?["message"] as? [String: Any]
            let liveChoice = (live[index]["choices"] as? [[String: Any]])?.first?["message"] as? [String: Any]
            #expect(choice?["content"] as? String == liveChoice?["content"] as? String)
            #expect(
                (answer["usage"] as? [String: Any])?["completion_tokens"] as? Int
                    == (live[index]["usage"] as? [String: Any])?["completion_tokens"] as? Int)
        }
        let billed = (try sim.stats()["billed_batch"] as? [String: Any])?.compactMapValues {
            ($0 as? NSNumber)?.intValue
        }
        #expect(billed == liveBilled)
        #expect(
            String(decoding: try sim.request("GET", "/v1/files/\(outputID)/content"), as: UTF8.self) == output
        )
        let listed = try call(sim, "GET", "/v1/batches?limit=1")
        #expect((listed["data"] as? [[String: Any]])?.first?["id"] as? String == id)
    }

    @Test func moreThanOneModelFailsTheBatch() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "0"])
        let fileID = try #require(try upload(sim, lines(["m", "other", "m"]))["id"] as? String)
        let id = try #require(try create(sim, file: fileID)["id"] as? String)
        let batch = try call(sim, "GET", "/v1/batches/\(id)")
        #expect(batch["status"] as? String == "failed")
        let errors = try #require((batch["errors"] as? [String: Any])?["data"] as? [[String: Any]])
        #expect(
            errors.first?["message"] as? String
                == "the input file uses more than one model (m, other); a batch's requests must all use the same model"
        )
    }

    @Test func faultsAndCancelGoToTheErrorFile() throws {
        let sim = try SimProcess(arguments: ["--batch-delay", "600"])
        _ = try call(sim, "POST", "/sim/batch-faults", ["expired": ["r1"]])
        let fileID = try #require(try upload(sim, lines(["m", "m", "m"]))["id"] as? String)
        let id = try #require(try create(sim, file: fileID)["id"] as? String)
        #expect(try call(sim, "POST", "/v1/batches/\(id)/cancel")["status"] as? String == "cancelling")
        let batch = try call(sim, "GET", "/v1/batches/\(id)")
        #expect(batch["status"] as? String == "cancelled")
        #expect(batch["request_counts"] as? [String: Int] == ["total": 3, "completed": 0, "failed": 3])
        #expect(batch["output_file_id"] is NSNull)
        let errorID = try #require(batch["error_file_id"] as? String)
        let text = String(decoding: try sim.request("GET", "/v1/files/\(errorID)/content"), as: UTF8.self)
        let codes = try text.split(separator: "\n").map {
            ((try object(Data($0.utf8)))["error"] as? [String: Any])?["code"] as? String
        }
        #expect(codes == ["batch_cancelled", "batch_cancelled", "batch_cancelled"])
    }
}
