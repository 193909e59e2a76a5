import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// `offpeak submit`'s reading of lines and `offpeak result`'s lookup, in the library.
@Suite(.ownThreads) struct SubmissionStreamTests {
    static func context() throws -> (TemporaryWorkspace, WorkspaceContext) {
        let workspace = try TemporaryWorkspace()
        try workspace.write("jobs/inbox.yaml", "kind: prompt\nqueue: true\ntemplate: \"Q: {{item}}\"\n")
        try workspace.write("jobs/plain.yaml", "kind: prompt\ntemplate: \"{{item}}\"\nitems: [x]\n")
        return (workspace, try JobRunnerIntegrationTests.context(workspace))
    }

    static func input(_ text: String) throws -> FileHandle {
        let pipe = Pipe()
        try pipe.fileHandleForWriting.write(contentsOf: Data(text.utf8))
        try pipe.fileHandleForWriting.close()
        return pipe.fileHandleForReading
    }

    @Test func eachLineIsReportedInOrderOnceCommittedInChunks() throws {
        let (workspace, context) = try Self.context()
        defer { withExtendedLifetime(workspace) {} }
        let stream = try SubmissionStream(
            queue: SubmissionQueue(
                store: try context.openStore(), spec: try context.loadJob("inbox"), config: context.config),
            spec: try context.loadJob("inbox"), chunk: 2)
        let lines = """
            {"id": "a", "vars": {"item": "one"}}
            not json

            {"id": "a", "vars": {"item": "again"}}
            {"id": "b", "vars": {"item": "two"}}
            """
        var outcomes: [String] = []
        let refused = try stream.submit(from: try Self.input(lines)) { outcome in
            switch outcome {
            case .success(let id): outcomes.append(id.hasPrefix("r") ? "id" : id)
            case .failure(let error): outcomes.append(error.description)
            }
        }
        #expect(refused == 2)
        let run = try #require(try context.openStore().runs.latestResumableRun(job: "inbox")).id
        #expect(
            outcomes == [
                "id", "stdin:2: expected one JSON object per line, like {\"vars\": {\"item\": \"...\"}}",
                "stdin:4: id: \"a\" was already submitted to run \(run)", "id",
            ], "line 1 was committed with the first chunk of two")
    }

    @Test func aJobThatTakesNoSubmissionsIsRefusedBeforeTheStoreIsOpened() throws {
        let (workspace, context) = try Self.context()
        do {
            _ = try context.submissionStream(job: "plain")
            Issue.record("the job took submissions")
        } catch {
            #expect(error.status == .dataError)
            #expect(error.message == "job plain does not take submissions; add 'queue: true' to its spec")
        }
        #expect(!FileManager.default.fileExists(atPath: workspace.root.appendingPathComponent("cache").path))
    }

    @Test func aResultSaysWhyItHasNoAnswerAndWhichStatusThatIs() throws {
        let (workspace, context) = try Self.context()
        defer { withExtendedLifetime(workspace) {} }
        var ids: [String] = []
        _ = try context.submissionStream(job: "inbox").submit(
            from: try Self.input(#"{"vars": {"item": "q"}}"#)
        ) {
            if case .success(let id) = $0 { ids.append(id) }
        }
        let id = try #require(ids.first)
        let pending = try RequestAnswer.look(up: id, in: try context.openStore(), wait: true, timeout: 0.3)
        #expect(pending.status == .temporaryFailure && pending.answer == nil)
        #expect(pending.explanation == "\(id) is pending: waiting for the next run of job inbox")
        do {
            _ = try RequestAnswer.look(up: "r0000", in: try context.openStore(), wait: false, timeout: 0)
            Issue.record("a missing request was found")
        } catch {
            #expect(error.description == "no request with id r0000")
        }
    }
}
