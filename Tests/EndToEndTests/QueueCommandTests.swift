import Foundation
import OffpeakTestSupport
import Testing

/// `offpeak submit`, the spool folder and `offpeak result`, through the built binary.
@Suite(.ownThreads) struct QueueCommandTests {
    static func inbox(_ sim: SimProcess?) throws -> TemporaryWorkspace {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim?.url ?? "http://127.0.0.1:9")\n")
        try workspace.write(
            "jobs/inbox.yaml",
            """
            kind: prompt
            queue: true
            system: Answer in one sentence.
            template: "{{item}}"
            max_tokens: 60
            """)
        return workspace
    }

    @Test func tenThousandLinesAreCommittedAndBadLinesNamed() throws {
        let workspace = try Self.inbox(nil)
        var lines: [String] = []
        for index in 1...10_000 {
            switch index {
            case 17: lines.append("{not json")
            case 4242: lines.append(#"{"vars": {"topic": "x"}}"#)
            case 9001: lines.append(#"{"prompt": "x", "tier": "giant"}"#)
            default:
                lines.append(#"{"id": "c\#(index)", "vars": {"item": "Question \#(index)? It matters."}}"#)
            }
        }
        let result = try workspace.offpeak(
            ["submit", "--job", "inbox"], stdin: lines.joined(separator: "\n"))
        #expect(result.status == 65)
        let ids = result.stdout.split(separator: "\n")
        #expect(ids.count == 9_997)
        #expect(Set(ids).count == 9_997)
        let errors = result.stderr.split(separator: "\n")
        #expect(errors.count == 3)
        #expect(errors[0].contains("stdin:17:"))
        #expect(errors[1].contains("stdin:4242: vars.item"))
        #expect(errors[2].contains("stdin:9001: tier"))
        let status = try workspace.offpeak(["status", "--json"])
        #expect(status.stdout.contains("\"items_total\" : 9997"))
        // The same client id again is refused, not queued twice.
        let again = try workspace.offpeak(
            ["submit", "--job", "inbox"], stdin: #"{"id": "c1", "vars": {"item": "again"}}"#)
        #expect(again.status == 65)
        #expect(again.stderr.contains("already submitted"))
    }

    @Test func submittedAndSpooledRequestsAreAnsweredAndReadBack() throws {
        let sim = try SimProcess()
        let workspace = try Self.inbox(sim)
        let submitted = try workspace.offpeak(
            ["submit", "--job", "inbox"],
            stdin: #"{"id": "q1", "vars": {"item": "Why is the sky blue? Light scatters."}}"# + "\n"
                + #"{"prompt": "Name a prime. Seven is one."}"#)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let ids = submitted.stdout.split(separator: "\n").map(String.init)
        #expect(ids.count == 2)
        let pending = try workspace.offpeak(["result", ids[0]])
        #expect(pending.status == 75)
        #expect(pending.stderr.contains("pending"))
        try workspace.write("spool/inbox/note.txt", "What is a tide? The sea rises.")
        let run = try workspace.offpeak(["run", "inbox"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("3 of 3 items answered"))
        let answer = try workspace.offpeak(["result", ids[0], "--wait", "--timeout", "5"])
        #expect(answer.status == 0)
        #expect(answer.stdout == "Answer: Why is the sky blue?\n")
        #expect(workspace.read("spool/inbox/.taken/note.txt") != nil, "a taken file is moved aside")
        #expect(workspace.read("out/inbox/note.md")?.hasPrefix("Answer: What is a tide?") == true)
        let unknown = try workspace.offpeak(["result", "r0000000000000000"])
        #expect(unknown.status == 65)
    }
}
