import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// A request's source is an enum whose raw values are the strings stores already hold.
@Suite(.ownThreads) struct RequestSourceTests {
    @Test func rawValuesAreTheStoredStrings() {
        #expect(RequestSource.allCases.map(\.rawValue) == ["spec", "submit", "spool", "chunk", "reduce"])
        #expect(RequestSource.steps == [.chunk, .reduce])
        #expect(RequestSource.allCases.filter(\.isStep) == [.chunk, .reduce])
    }

    /// A row written with each string (as an older offpeak wrote them) reads back as its case.
    @Test func storedStringsReadBackAsSources() throws {
        let workspace = try TemporaryWorkspace()
        let store = try StoreTests.store(workspace)
        let texts = ["spec", "submit", "spool", "chunk", "reduce"]
        let requests = texts.indices.map { index in
            var request = StoreTests.request("i\(index)", run: "r1", position: index)
            request.id = "q\(index)"
            return request
        }
        try store.runs.insert(run: StoreTests.run("r1"), requests: requests)
        for (text, request) in zip(texts, requests) {
            try store.execute("UPDATE requests SET source = ? WHERE id = ?", [text, request.id])
        }
        let sources = try store.runs.requests(runID: "r1").map(\.source)
        #expect(sources == [.spec, .submit, .spool, .chunk, .reduce])
    }
}
