import Foundation
import Testing

@testable import Offpeak

/// A request's run, on both engines: a request naming no run is refused, whole statement and all,
/// and a run's deletion takes its requests and their answers with it. SQLite keeps this by its
/// foreign key; PostgreSQL, since schema v4, by triggers that check an insert's runs once per
/// statement (`PostgresSchema.requestRuns`).
struct RequestRunTests {
    typealias F = RoleFixtures

    static func insert(_ rows: [(id: String, run: String)]) -> String {
        let values = rows.map { row in
            "('\(row.id)', '\(row.run)', 'j', '\(row.id)', 9, 'spec', 'fast', 'p', 'k', 'pending', "
                + "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
        }
        return """
            INSERT INTO requests (id, run_id, job, item_id, position, source, tier, payload, cache_key, state,
                created_at, updated_at)
            VALUES \(values.joined(separator: ", "))
            """
    }

    @Test(arguments: StoreEngine.allCases)
    func aRequestNeedsItsRunAndGoesWithIt(engine: StoreEngine) throws {
        let roles = try engine.roles()
        try roles.runs.insert(run: F.run("r1"), requests: F.requests(3, run: "r1"))
        try roles.runs.insert(run: F.run("r2"), requests: F.requests(2, run: "r2"))
        let answered = try #require(try roles.runs.requests(runID: "r1", states: nil).first)
        let run = try #require(try roles.runs.run(id: "r1"))
        try roles.runs.commitCall(run: run, ledger: nil, results: [F.result(answered)])
        #expect(try roles.runs.results(runID: "r1").count == 1)

        #expect(throws: (any Error).self) { try roles.execute(Self.insert([(id: "lost", run: "none")])) }
        #expect(throws: (any Error).self) {
            try roles.execute(Self.insert([(id: "kept", run: "r2"), (id: "lost", run: "none")]))
        }
        #expect(
            try roles.runs.requests(runID: "r2", states: nil).count == 2, "nothing of the statement stays")
        try roles.execute(Self.insert([(id: "x1", run: "r2"), (id: "x2", run: "r1")]))
        #expect(try roles.runs.requests(runID: "r2", states: nil).count == 3)

        try roles.execute("DELETE FROM runs WHERE id = 'r1'")
        #expect(try roles.runs.requests(runID: "r1", states: nil).isEmpty)
        #expect(try roles.submissions.request(id: answered.id) == nil)
        #expect(try roles.runs.results(runID: "r1").isEmpty, "the answers went with their requests")
        #expect(try roles.runs.requests(runID: "r2", states: nil).count == 3)
        #expect(try roles.runs.itemCounts(runID: "r2").requests == 3)
    }
}
