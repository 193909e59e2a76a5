import Foundation
import OffpeakTestSupport
import Testing

/// Issue 14, item 2: `offpeak estimate JOB` plans a run without sending or writing anything. The
/// built `offpeak` against the built `offpeak-sim`.
@Suite(.ownThreads) struct EstimateTests {
    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// A prompt job of `count` tickets whose shared instructions (about 300 tokens) make batching
    /// pay, at claude-sonnet-4-5 on `url` (a sim, or nothing listening).
    static func tickets(url: String, count: Int = 5) throws -> TemporaryWorkspace {
        let workspace = try TemporaryWorkspace()
        try workspace.write(
            "offpeak.yaml", "provider: sim\nbase_url: \(url)\nmodels: {sim: {fast: claude-sonnet-4-5}}\n")
        try workspace.write("jobs/tickets.yaml", ticketsSpec(1...count))
        return workspace
    }

    static func ticketsSpec(_ numbers: ClosedRange<Int>) -> String {
        let rules = (1...24).map { "Rule \($0): name the one label that fits best, in lower case." }
        var spec = """
            kind: prompt
            system: You label support tickets with one word.
            instructions: "\(rules.joined(separator: " "))"
            template: "Label this ticket: {{item}}"
            max_tokens: 40
            items:

            """
        for number in numbers {
            spec += "  - {id: t\(number), item: \"Ticket \(number): the printer on floor \(number) jams.\"}\n"
        }
        return spec
    }

    @Test func theEstimateOfASmallJobSaysWhatARunWouldDoAndCost() throws {
        let workspace = try Self.tickets(url: "http://127.0.0.1:9")
        let estimate = try workspace.offpeak(["estimate", "tickets"])
        #expect(estimate.status == 0, "\(estimate.stderr)")
        #expect(
            estimate.stdout == """
                estimate for job tickets (nothing sent, nothing written): claude-sonnet-4-5 on sim
                items: 5; 0 answered from the cache, 5 to ask
                answers: about 20 tokens an answer: half of max_tokens (40), as no answer of claude-sonnet-4-5 is measured in this workspace yet

                LANE    CALLS  BATCHED  INPUT  CACHE READ  CACHE WRITE  OUTPUT  COST
                live *  1      1        520    0           0            130     $0.003510
                batch   1      1        520    0           0            130     $0.001755
                naive   5      0        1885   0           0            100     $0.007155
                * the lane the run takes
                naive: one request per item, whole, with no cache, no batching and no prompt cache
                time: unknown: no call to claude-sonnet-4-5 is measured in this workspace yet (1 call, 8 at a time)

                """)
        // A workspace with no store is estimated as new, and gets none.
        #expect(!FileManager.default.fileExists(atPath: workspace.root.appendingPathComponent("cache").path))
    }

    @Test func theJSONHasItemsLanesTokensByKindAndTime() throws {
        let workspace = try Self.tickets(url: "http://127.0.0.1:9")
        let estimate = try workspace.offpeak(["estimate", "tickets", "--json"])
        #expect(estimate.status == 0, "\(estimate.stderr)")
        let report = try Self.json(estimate.stdout)
        #expect(
            Set(report.keys) == [
                "job", "provider", "model", "lane", "items", "items_cached", "items_to_ask", "items_refused",
                "items_done_before", "items_in_batch", "long_documents", "chunks", "steps_cached",
                "output_tokens_per_item", "output_basis", "output_note", "live", "batch", "naive", "dollars",
                "unpriced", "searches_priced", "in_flight", "notes",
            ])
        let lane = try #require(report["live"] as? [String: Any])
        #expect(
            Set(lane.keys) == [
                "calls", "batched_calls", "requests", "input_tokens", "cache_read_tokens",
                "cache_write_tokens",
                "output_tokens", "searches", "dollars",
            ])
        #expect(report["lane"] as? String == "live")
        #expect(report["items"] as? Int == 5)
        #expect(lane["calls"] as? Int == 1)
        #expect(lane["batched_calls"] as? Int == 1)
        #expect(report["output_basis"] as? String == "max_tokens")
        #expect(report["dollars"] as? Double == lane["dollars"] as? Double)
        #expect((report["naive"] as? [String: Any])?["calls"] as? Int == 5)
        #expect(report["wall_seconds"] == nil)  // no call measured yet
    }

    @Test func anEstimateCountsTheAnswersTheCacheHoldsAndTheMeasuredAnswerLength() throws {
        let sim = try SimProcess()
        let workspace = try Self.tickets(url: sim.url, count: 3)
        let run = try workspace.offpeak(["run", "tickets"])
        #expect(run.status == 0, "\(run.stderr)")
        try workspace.write("jobs/tickets.yaml", Self.ticketsSpec(1...5))
        let estimate = try workspace.offpeak(["estimate", "tickets", "--json"])
        #expect(estimate.status == 0, "\(estimate.stderr)")
        let report = try Self.json(estimate.stdout)
        #expect(report["items"] as? Int == 5)
        #expect(report["items_cached"] as? Int == 3)
        #expect(report["items_to_ask"] as? Int == 2)
        #expect(report["output_basis"] as? String == "job")
        let live = try #require(report["live"] as? [String: Any])
        #expect(live["requests"] as? Int == 2)
        #expect(report["wall_seconds"] is Double)  // the first run measured the model
        let fresh = try workspace.offpeak(["estimate", "tickets", "--json", "--no-cache"])
        #expect(try Self.json(fresh.stdout)["items_cached"] as? Int == 0)
    }

    @Test func anEstimateSendsNothingAndLeavesTheStoreAsItWas() throws {
        let first = try SimProcess()
        let workspace = try Self.tickets(url: first.url, count: 3)
        #expect(try workspace.offpeak(["run", "tickets"]).status == 0)
        try workspace.write("jobs/tickets.yaml", Self.ticketsSpec(1...5))
        let cache = workspace.root.appendingPathComponent("cache")
        // The store's files, not `-shm`: SQLite's index of the WAL, where every reader takes a
        // read mark. A release `run` exits leaving its WAL (a debug one checkpoints it as its pool
        // is freed), so there the estimate's read marks changed the index while the store did not.
        func files() throws -> [String: Data] {
            var found: [String: Data] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: cache.path)
            where !name.hasSuffix("-shm") {
                found[name] = try Data(contentsOf: cache.appendingPathComponent(name))
            }
            return found
        }
        // On PostgreSQL, the workspace's database: every table's rows.
        func store() throws -> [String: Data] {
            guard TestStore.onPostgres else { return try files() }
            let found = FileManager.default.fileExists(atPath: cache.path) ? try files() : [:]
            return try workspace.databaseRows().mapValues { Data($0.utf8) }.merging(found) { rows, _ in rows }
        }
        let before = try store()
        #expect(before[TestStore.onPostgres ? "runs" : "offpeak.sqlite"] != nil)
        let other = try SimProcess()
        let estimate = try workspace.offpeak(["estimate", "tickets", "--base-url", other.url])
        #expect(estimate.status == 0, "\(estimate.stderr)")
        #expect(try other.stats()["calls"] as? Int == 0)
        #expect(try store() == before)
        let summarize = try workspace.offpeak([
            "summarize", "jobs/tickets.yaml", "--estimate", "--base-url", other.url,
        ])
        #expect(summarize.status == 0, "\(summarize.stderr)")
        #expect(try other.stats()["calls"] as? Int == 0)
        #expect(try store() == before)
    }

    /// A long document is planned as the run plans it: its chunks, then the request that combines
    /// their summaries; the estimate makes the calls the run then makes.
    @Test func aLongDocumentIsEstimatedInItsChunksAndCallsAsTheRunMakesThem() throws {
        let sim = try SimProcess()
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\n")
        for (number, sentences) in [(1, 30), (2, 30), (3, 400)] {
            let text = (1...sentences).map {
                "Sentence \($0) of document \(number) reports value \($0 * number)."
            }
            try workspace.write("docs/d\(number).md", text.joined(separator: " ") + "\n")
        }
        try workspace.write(
            "jobs/docs.yaml",
            "kind: summarize\ninputs: [docs/*.md]\nmax_tokens: 150\nchunking: {max_tokens: 1000, overlap: 50}\n"
        )
        let estimate = try workspace.offpeak(["estimate", "docs", "--json"])
        #expect(estimate.status == 0, "\(estimate.stderr)")
        let report = try Self.json(estimate.stdout)
        #expect(report["items"] as? Int == 3)
        #expect(report["items_to_ask"] as? Int == 3)
        #expect(report["long_documents"] as? Int == 1)
        let chunks = try #require(report["chunks"] as? Int)
        #expect(chunks > 1)
        let live = try #require(report["live"] as? [String: Any])
        #expect(try sim.stats()["calls"] as? Int == 0)
        #expect(try workspace.offpeak(["run", "docs"]).status == 0)
        #expect(live["calls"] as? Int == (try sim.stats()["calls"] as? Int))
        #expect(live["requests"] as? Int == 2 + chunks + 1)
    }
}
