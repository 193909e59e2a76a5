import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Long lines in spool files (issue 21, item 3): the spool reads lines as `offpeak submit` does, so a
/// line over `ValueLimits.lineBytes` is refused at its number naming the limit, the lines around it
/// taken; a file taken as one request is held to the same limit.
@Suite(.ownThreads) struct SpoolLongLineTests {
    static let limit = 32 << 20
    static let refusal =
        "bytes; a request may be at most 33554432 bytes (32 MiB), more than any provider takes"

    @Test(.timeLimit(.minutes(1))) func aLineOverTheLimitIsRefusedAndTheLinesAroundItTaken() throws {
        let inbox = try SpoolFolderTests.Inbox()
        let big = #"{"id": "big", "prompt": ""# + String(repeating: "tide ", count: 2_000_000) + #""}"#
        try inbox.workspace.write(
            "spool/inbox/a.jsonl",
            [
                #"{"id": "a", "prompt": "before"}"#, String(repeating: "x", count: Self.limit + 1), big,
                #"{"id": "b", "prompt": "after"}"#,
            ].joined(separator: "\n"))
        let taken = try inbox.take()
        #expect(
            taken.refused.map(\.description) == ["spool/inbox/a.jsonl:2: a line of 33554433 \(Self.refusal)"])
        #expect(taken.added.count == 3)
        #expect(try inbox.payloads().count > 10_000_000, "the 10 MB prompt is stored whole")
    }

    @Test func aFileTakenAsOneRequestIsHeldToTheLimit() throws {
        let inbox = try SpoolFolderTests.Inbox()
        try inbox.workspace.write("spool/inbox/big.txt", String(repeating: "z", count: Self.limit + 2))
        try inbox.workspace.write("spool/inbox/fits.txt", String(repeating: "z", count: 1_000))
        let taken = try inbox.take()
        #expect(
            taken.refused.map(\.description) == ["spool/inbox/big.txt: a file of 33554434 \(Self.refusal)"])
        #expect(taken.added.count == 1)
    }
}
