import Foundation
import OffpeakTestSupport
import Testing

/// `offpeak submit` with long lines (issue 21, item 3). A 10 MB line had not been taken after two
/// minutes: stdin arrives in 4 KiB reads, and each read searched the line for its end from its
/// start again (about 12 billion byte compares for 10 MB). Now every byte is searched once, and a
/// line over the limit (`ValueLimits.lineBytes`, 32 MiB) is refused at its number, naming the
/// limit, while the lines around it go in.
///
/// Speed is not asserted by a timer on a shared machine: the ceilings below are hang guards, 20
/// times what the linear code takes in a debug build and far below what the old code needed.
@Suite(.ownThreads, .serialized) struct LongLineTests {
    static let limit = 32 << 20

    static func workspace() throws -> TemporaryWorkspace {
        let workspace = try TemporaryWorkspace()
        // `submit` only writes the store: no provider is asked.
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: http://127.0.0.1:9\n")
        try workspace.write(
            "jobs/inbox.yaml", "kind: prompt\nqueue: true\ntemplate: \"{{item}}\"\nmax_tokens: 60\n")
        return workspace
    }

    static func items(_ workspace: TemporaryWorkspace) throws -> Int? {
        let status = try workspace.offpeak(["status", "--json"])
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        return (json["runs"] as? [[String: Any]])?.first?["items_total"] as? Int
    }

    /// A 10 MB prompt between two short lines: three ids, in order, and nothing on stderr.
    @Test func aTenMegabyteLineIsTakenWithTheLinesAroundIt() throws {
        let workspace = try Self.workspace()
        let big = #"{"id": "big", "prompt": ""# + String(repeating: "tide ", count: 2_000_000) + #""}"#
        let lines = [#"{"id": "a", "prompt": "short"}"#, big, #"{"id": "b", "vars": {"item": "x"}}"#]
        let submitted = try workspace.offpeak(
            ["submit", "--job", "inbox"], stdin: lines.joined(separator: "\n") + "\n", timeout: 60)
        #expect(submitted.status == 0 && submitted.stderr == "", "\(submitted.stderr)")
        let ids = submitted.stdout.split(separator: "\n").map(String.init)
        #expect(ids.count == 3)
        #expect(try Self.items(workspace) == 3)
        let answer = try workspace.offpeak(["result", try #require(ids.dropFirst().first)])
        #expect(answer.status == 75, "the big request is pending like the others: \(answer.stderr)")
    }

    /// A line one byte over the limit (garbage, with no `\n` to stop at for 32 MiB) is refused at
    /// its number with the limit; the lines before and after it are taken, and the status is 65,
    /// as for any bad line among good ones.
    @Test func aLineOverTheLimitIsRefusedAtItsNumberAndTheLinesAroundItGoIn() throws {
        let workspace = try Self.workspace()
        let lines = [
            #"{"id": "a", "prompt": "before"}"#, String(repeating: "x", count: Self.limit + 1),
            #"{"id": "b", "prompt": "after"}"#, String(repeating: "y", count: Self.limit),
        ]
        let submitted = try workspace.offpeak(
            ["submit", "--job", "inbox"], stdin: lines.joined(separator: "\n"), timeout: 60)
        #expect(submitted.status == 65)
        #expect(
            submitted.stderr == """
                offpeak: stdin:2: a line of 33554433 bytes; a request may be at most 33554432 bytes (32 MiB), more than any provider takes
                offpeak: stdin:4: expected one JSON object per line, like {"vars": {"item": "..."}}

                """)
        #expect(submitted.stdout.split(separator: "\n").count == 2)
        #expect(try Self.items(workspace) == 2)
    }
}
