import Foundation
import GRDB
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// A request's source is an enum whose raw values are the strings stores already hold.
struct RequestSourceTests {
    @Test func rawValuesAreTheStoredStrings() {
        #expect(RequestSource.allCases.map(\.rawValue) == ["spec", "submit", "spool", "chunk", "reduce"])
        #expect(RequestSource.steps == [.chunk, .reduce])
        #expect(RequestSource.allCases.filter(\.isStep) == [.chunk, .reduce])
    }

    /// A row written with each string (as an older offpeak wrote them) reads back as its case.
    @Test(.sqliteOnly) func storedStringsReadBackAsSources() throws {
        let workspace = try TemporaryWorkspace()
        let store = try StoreTests.store(workspace)
        try store.sqlite.write { db in try StoreTests.run("r1").insert(db) }
        for (index, text) in ["spec", "submit", "spool", "chunk", "reduce"].enumerated() {
            var request = StoreTests.request("i\(index)", run: "r1", position: index)
            request.id = "q\(index)"
            try store.sqlite.write { db in
                try request.insert(db)
                try db.execute(
                    sql: "UPDATE requests SET source = ? WHERE id = ?", arguments: [text, request.id])
            }
        }
        let sources = try store.runs.requests(runID: "r1").map(\.source)
        #expect(sources == [.spec, .submit, .spool, .chunk, .reduce])
    }
}
