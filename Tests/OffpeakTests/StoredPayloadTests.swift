import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// A submitted request's row holds its system prompt by reference, the prompt is stored once, and
/// every read gives the payload whole (issue 21, item 7: `offpeak submit` wrote each ~5 KB prompt
/// into every row).
@Suite(.ownThreads) struct StoredPayloadTests {
    static let system = String(
        repeating: "House rule: answer kindly, \"briefly\" and in one line.\n", count: 40)

    struct Inbox {
        let workspace: TemporaryWorkspace
        let store: Store
        let spec: JobSpec
        let queue: SubmissionQueue

        init(system: String = StoredPayloadTests.system) throws {
            workspace = try TemporaryWorkspace()
            try workspace.write("offpeak.yaml", "provider: sim\n")
            let quoted = String(data: try JSONEncoder().encode(system), encoding: .utf8) ?? ""
            try workspace.write(
                "jobs/inbox.yaml",
                "kind: prompt\nqueue: true\nsystem: \(quoted)\ninstructions: Be brief.\ntemplate: \"{{item}}\"\n"
            )
            store = try workspace.openStore()
            spec = try JobSpecParser.load(
                path: workspace.root.appendingPathComponent("jobs/inbox.yaml"), workspace: workspace.root)
            queue = SubmissionQueue(
                store: store, spec: spec, config: try WorkspaceConfigParser.load(workspace: workspace.root))
        }

        func submit(_ items: [String]) throws -> [String] {
            let submissions = try items.enumerated().map { index, item in
                let line =
                    String(data: try JSONEncoder().encode(["vars": ["item": item]]), encoding: .utf8) ?? ""
                return try Submission.parse(line, location: "stdin:\(index + 1)", spec: spec)
            }
            return try queue.submit(submissions, source: .submit).map { try $0.get() }
        }

        /// What a request is when made whole, as a run would ask it.
        func wholePayload(_ item: String) -> String {
            let request = RequestPlanner(provider: .sim, model: queue.config.model(for: spec.tier))
                .request(spec, userMessage: item)
            return RequestPlanner.payloadAndKey(provider: .sim, request: request).payload
        }

        func rawPayloads() throws -> [String] {
            try store.values("SELECT payload FROM requests ORDER BY position", as: String.self).map {
                $0 ?? ""
            }
        }

        func sharedTexts() throws -> Int {
            try store.count("shared_texts")
        }
    }

    @Test func aSubmittedRowHoldsItsPromptByReferenceAndReadsWhole() throws {
        let inbox = try Inbox()
        let items = ["What is a tide?", "Quote \"this\" and a \\ backslash", "é€😀"]
        let ids = try inbox.submit(items)
        let raw = try inbox.rawPayloads()
        #expect(raw.count == 3)
        for (row, item) in zip(raw, items) {
            #expect(row.utf8.count < 400, "the ~2 KB prompt is not in the row")
            #expect(
                row.contains(
                    item.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(
                        of: "\"", with: "\\\"")))
        }
        #expect(try inbox.sharedTexts() == 1)
        // Another chunk, and another tier's model: the same text, still once.
        _ = try inbox.submit(["one more"])
        #expect(try inbox.sharedTexts() == 1)

        for (id, item) in zip(ids, items) {
            let (request, _) = try #require(try inbox.store.submissions.request(id: id))
            #expect(request.payload == inbox.wholePayload(item))
            #expect(try request.completionRequest().system == Self.system + "\n\nBe brief.")
        }
        let run = try #require(try inbox.store.runs.runs().first)
        let pending = try inbox.store.runs.pendingRequests(runID: run.id, limit: 10)
        #expect(pending.map(\.payload) == (items + ["one more"]).map(inbox.wholePayload))
        #expect(try inbox.store.runs.requests(runID: run.id).map(\.payload) == pending.map(\.payload))
    }

    /// A run's requests from its spec share the prompt too, and a spec that changes a pending
    /// request's prompt rewrites it whole; both read back as they were given.
    @Test func aSpecRunSharesItsPromptAndReadsWhole() throws {
        let inbox = try Inbox()
        let run = RunRecord.new(
            job: inbox.spec, provider: .sim, model: "m", itemsTotal: 2, at: Date())
        func request(_ item: String, payload: String, position: Int) -> RequestRecord {
            RequestRecord(
                id: RequestRecord.newID(), runId: run.id, job: "inbox", itemId: item, position: position,
                source: .spec, clientId: nil, tier: "fast", payload: payload, cacheKey: "k-\(item)",
                state: .pending, attempts: 0, nextAttemptAt: nil, error: nil, createdAt: Date(),
                updatedAt: Date())
        }
        let payloads = ["a", "b"].map(inbox.wholePayload)
        try inbox.store.runs.insert(
            run: run,
            requests: [
                request("a", payload: payloads[0], position: 0),
                request("b", payload: payloads[1], position: 1),
            ])
        #expect(try inbox.rawPayloads().allSatisfy { $0.utf8.count < 400 })
        #expect(try inbox.sharedTexts() == 1)
        #expect(try inbox.store.runs.requests(runID: run.id).map(\.payload) == payloads)
        let changed = "{\"changed\":true}"
        try inbox.store.runs.merge(
            requests: [
                request("a", payload: changed, position: 0), request("b", payload: payloads[1], position: 1),
            ],
            into: run.id)
        #expect(try inbox.store.runs.requests(runID: run.id).map(\.payload) == [changed, payloads[1]])
    }

    /// A short prompt (and a row written whole by an older offpeak) is kept whole and read as it is.
    @Test func shortPromptsAndOldRowsStayWhole() throws {
        let inbox = try Inbox(system: "Answer in one line.")
        let ids = try inbox.submit(["What is a tide?"])
        #expect(try inbox.rawPayloads() == [inbox.wholePayload("What is a tide?")])
        #expect(try inbox.sharedTexts() == 0)
        #expect(
            try inbox.store.submissions.request(id: ids[0])?.0.payload
                == inbox.wholePayload("What is a tide?"))
    }

    /// A row naming a text the store lacks is an error that says so, never a garbled prompt.
    @Test func aMissingTextIsADataError() throws {
        let inbox = try Inbox(system: Self.system + "another prompt, never read before in this process")
        let ids = try inbox.submit(["x"])
        try inbox.store.execute("DELETE FROM shared_texts")
        #expect {
            _ = try inbox.store.submissions.request(id: ids[0])
        } throws: { error in
            (error as? OffpeakError)?.description.contains("is missing from the store") == true
        }
    }
}
