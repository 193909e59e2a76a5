import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Retention (issue 46, item 1), through the built binary on the suite's store: `offpeak store
/// prune` removes the requests and results of runs finished past the horizon, and their stored
/// prompts once unused; it keeps pending work whatever its age, the runs' rows, the ledger (every
/// `costs` total to the cent) and the items they answered, and a SQLite file shrinks back.
@Suite(.ownThreads, .serialized) struct RetentionTests {
    /// A workspace on `sim`: the summarize job `notes` over 3 documents and the queue job `inbox`,
    /// each with a system prompt long enough to be stored once (`StoredPayload`).
    static func workspace(_ sim: SimProcess) throws -> TemporaryWorkspace {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\n")
        try workspace.writeDocuments(3)
        let long = String(repeating: "Write plainly and keep to the facts of the text. ", count: 8)
        try workspace.write(
            "jobs/notes.yaml",
            "kind: summarize\ninputs: [docs/*.md]\nsystem: \"Notes. \(long)\"\nmax_tokens: 100\nbatching: off\n"
        )
        try workspace.write(
            "jobs/inbox.yaml",
            "kind: prompt\nqueue: true\nsystem: \"Inbox. \(long)\"\ntemplate: \"{{item}}\"\nmax_tokens: 60\n")
        return workspace
    }

    static func utc(_ date: Date) -> String {
        Timestamp.text(date, in: TimeZone(identifier: "UTC") ?? .current)
    }

    static func dollars(_ workspace: TemporaryWorkspace) throws -> String {
        let costs = try workspace.offpeak(["costs", "--json"])
        #expect(costs.status == 0, "\(costs.stderr)")
        return costs.stdout
    }

    @Test func pruningKeepsPendingWorkTheLedgerAndWhatWasAnswered() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim)
        #expect(try workspace.offpeak(["run", "notes"]).status == 0)
        let submitted = try workspace.offpeak(
            ["submit", "--job", "inbox"],
            stdin: #"{"id": "q1", "vars": {"item": "one"}}"# + "\n"
                + #"{"id": "q2", "vars": {"item": "two"}}"#)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let costs = try Self.dollars(workspace)
        let store = try workspace.openStore()
        let runs = try store.runs.runs()
        let notes = try #require(runs.first { $0.job == "notes" })
        let inbox = try #require(runs.first { $0.job == "inbox" })
        #expect(try store.runs.requests(runID: inbox.id).map(\.state) == [.pending, .pending])

        // A hundred days on: the notes run is past the default 90 days, and so is the inbox's
        // pending work, which is never pruned.
        let later = Date() + 100 * 86_400
        let cutoff = Self.utc(later - 90 * 86_400)
        let arguments = ["store", "prune", "--now", ISO8601DateFormatter().string(from: later)]
        let dry = try workspace.offpeak(arguments + ["--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(
            dry.stdout == """
                retention: finished runs are kept 90 days; those finished before \(cutoff)
                would prune 1 finished run (3 requests, 3 results); their calls stay in the ledger

                """)
        #expect(try store.runs.requests(runID: notes.id).count == 3, "a dry run removes nothing")

        let pruned = try workspace.offpeak(arguments)
        #expect(pruned.status == 0, "\(pruned.stderr)")
        let lines = pruned.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(
            Array(lines.prefix(2)) == [
                "retention: finished runs are kept 90 days; those finished before \(cutoff)",
                "pruned 1 finished run (3 requests, 3 results, 1 stored prompt); their calls stay in the ledger",
            ])
        #expect(lines.count == (TestStore.onPostgres ? 3 : 4), "\(pruned.stdout)")

        #expect(try store.runs.requests(runID: notes.id).isEmpty)
        #expect(try store.runs.run(id: notes.id)?.state == .completed, "the run's row stays")
        #expect(try store.runs.prunedAt(runID: notes.id) != nil)
        #expect(
            try store.runs.requests(runID: inbox.id).map(\.state) == [.pending, .pending],
            "pending work stays")
        #expect(
            try store.runs.answeredItems(job: "notes")
                == ["docs/doc-001.md", "docs/doc-002.md", "docs/doc-003.md"], "what it answered is known")
        #expect(try Self.dollars(workspace) == costs, "every total of costs, to the cent")
        #expect(
            try workspace.storeValues("SELECT count(*) FROM shared_texts") == "1", "the inbox's prompt stays")
        let outputs = try workspace.offpeak(["outputs", "notes"])
        #expect(outputs.status == 65)
        #expect(outputs.stderr.hasPrefix("offpeak: run \(notes.id)'s requests and results were pruned at "))

        let again = try workspace.offpeak(arguments)
        #expect(
            again.stdout
                == "retention: finished runs are kept 90 days; those finished before \(cutoff): none to prune\n"
        )
        // The inbox's work goes on, its prompt whole.
        let run = try workspace.offpeak(["run", "inbox"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try store.runs.requests(runID: inbox.id).map(\.state) == [.done, .done])
    }

    /// Past `retention.ledger` (180 days by default), a pruned run's calls are rolled up by day:
    /// `costs` prints what it printed, by job, model and day. With `ledger: off`, nothing is.
    @Test func theLedgerOfPrunedRunsIsRolledUpByDayWithEveryTotalKept() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim)
        #expect(try workspace.offpeak(["run", "notes"]).status == 0)
        let reports = { () throws -> [String] in
            try [["costs"], ["costs", "--by", "model"], ["costs", "--by", "day"]].map { arguments in
                let report = try workspace.offpeak(arguments)
                #expect(report.status == 0, "\(report.stderr)")
                return report.stdout
            }
        }
        let before = try reports()
        let at = { (days: Double) in ISO8601DateFormatter().string(from: Date() + days * 86_400) }
        #expect(try workspace.offpeak(["store", "prune", "--now", at(100)]).status == 0)
        #expect(try workspace.storeValues("SELECT count(*) FROM ledger") == "3")

        let later = Date() + 200 * 86_400
        let arguments = ["store", "prune", "--now", ISO8601DateFormatter().string(from: later)]
        let heading =
            "retention: finished runs are kept 90 days; those finished before \(Self.utc(later - 90 * 86_400))"
        let rolled =
            "the ledger rows of 1 run by day: 3 rows into 1 (runs finished before "
            + "\(Self.utc(later - 180 * 86_400)), 180 days); every total is kept"
        let dry = try workspace.offpeak(arguments + ["--dry-run"])
        #expect(dry.stdout == "\(heading)\nwould roll up \(rolled)\n")
        let done = try workspace.offpeak(arguments)
        #expect(done.status == 0, "\(done.stderr)")
        let lines = done.stdout.split(separator: "\n").map(String.init)
        #expect(Array(lines.prefix(2)) == [heading, "rolled up \(rolled)"])
        #expect(try workspace.storeValues("SELECT calls FROM ledger") == "3")
        #expect(try reports() == before)
        #expect(try workspace.offpeak(arguments).stdout == "\(heading): none to prune\n")

        let kept = try Self.workspace(sim)
        try kept.write(
            "offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\nretention: {runs: 30d, ledger: off}\n")
        #expect(try kept.offpeak(["run", "notes"]).status == 0)
        let whole = try kept.offpeak(["store", "prune", "--now", ISO8601DateFormatter().string(from: later)])
        #expect(
            whole.stdout.split(separator: "\n").dropFirst().first
                == "pruned 1 finished run (3 requests, 3 results, 1 stored prompt); the ledger is kept whole")
        #expect(try kept.storeValues("SELECT count(*) FROM ledger") == "3")
    }

    /// Every tick prunes a few runs past the horizon (`Tick.pruneRunsPerTick`) and says so.
    @Test func aTickPrunesRunsPastTheHorizon() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim)
        #expect(try workspace.offpeak(["run", "notes"]).status == 0)
        let soon = try workspace.offpeak([
            "tick", "--now", ISO8601DateFormatter().string(from: Date() + 3600),
        ])
        #expect(soon.stdout == "nothing to do\n", "not yet")
        let later = ISO8601DateFormatter().string(from: Date() + 100 * 86_400)
        let tick = try workspace.offpeak(["tick", "--now", later])
        #expect(tick.status == 0, "\(tick.stderr)")
        #expect(
            tick.stdout == """
                nothing to do
                purged 3 expired cache entries
                pruned 1 finished run (3 requests, 3 results, 1 stored prompt)

                """)
        // A hundred days later again, the run's calls are rolled up.
        let rolled = try workspace.offpeak([
            "tick", "--now", ISO8601DateFormatter().string(from: Date() + 200 * 86_400),
        ])
        #expect(rolled.status == 0, "\(rolled.stderr)")
        #expect(rolled.stdout == "nothing to do\nrolled up the ledger rows of 1 run by day: 3 rows into 1\n")
        let off = try TemporaryWorkspace()
        try off.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\nretention: off\n")
        #expect(
            try off.offpeak(["store", "prune"]).stdout
                == "retention is off (retention: off in offpeak.yaml): nothing is pruned\n")
    }

    /// A SQLite file shrinks back once its runs are pruned: offpeak makes its stores with
    /// `auto_vacuum = INCREMENTAL`.
    @Test(.sqliteOnly) func aSQLiteStoreShrinksBack() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim)
        // Documents of 8 KB (under chunking's 6,000 tokens): their text is most of what the run keeps.
        for index in 4...80 {
            try workspace.write(
                "docs/long-\(index).md",
                String(repeating: "Paragraph \(index): the harbour log notes tides and ferries. ", count: 140)
            )
        }
        #expect(try workspace.offpeak(["run", "notes"]).status == 0)
        #expect(try workspace.storeValues("PRAGMA auto_vacuum") == "2")
        let later = ISO8601DateFormatter().string(from: Date() + 100 * 86_400)
        let pruned = try workspace.offpeak(["store", "prune", "--now", later, "--json"])
        #expect(pruned.status == 0, "\(pruned.stderr)")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(pruned.stdout.utf8)) as? [String: Any])
        let before = try #require(json["bytes_before"] as? Int)
        let after = try #require(json["bytes_after"] as? Int)
        // What stays: an empty store's tables and indexes (about 400 KB), the cache and the ledger,
        // and the job's current spec (`job_specs`), which holds its documents' text.
        #expect(after < before / 2, "\(before) -> \(after)")
    }

    @Test func retentionIsReadFromOffpeakYAML() throws {
        #expect(
            try WorkspaceConfigParser.parse(yaml: "provider: sim\n", path: "offpeak.yaml").keepRuns == 90
                * 86_400)
        #expect(
            try WorkspaceConfigParser.parse(yaml: "retention: off\n", path: "offpeak.yaml").keepRuns == nil)
        #expect(
            try WorkspaceConfigParser.parse(yaml: "retention: {runs: 30d}\n", path: "offpeak.yaml").keepRuns
                == 30 * 86_400)
        let parsed = { (yaml: String) throws -> [TimeInterval?] in
            let config = try WorkspaceConfigParser.parse(yaml: yaml, path: "offpeak.yaml")
            return [config.keepRuns, config.keepLedgerRows].map { $0.map { $0 / 86_400 } }
        }
        #expect(try parsed("provider: sim\n") == [90, 180])
        #expect(try parsed("retention: off\n") == [nil, nil])
        #expect(try parsed("retention: {runs: 30d}\n") == [30, 180])
        #expect(try parsed("retention: {runs: 400d}\n") == [400, 400], "never less than runs")
        #expect(try parsed("retention: {runs: 30d, ledger: 60d}\n") == [30, 60])
        #expect(try parsed("retention: {ledger: off}\n") == [90, nil])
        for (yaml, message) in [
            (
                "retention: {runs: 12h}\n",
                "offpeak.yaml:1:19: retention.runs: expected a day or more (1d to 3650d), got less"
            ),
            (
                "retention: on\n",
                "offpeak.yaml:1:12: retention: expected 'off' or a mapping with runs and ledger "
                    + "(for example {runs: 90d, ledger: 180d}), got 'on'"
            ),
            (
                "retention: {runs: 90d, ledger: 30d}\n",
                "offpeak.yaml:1:32: retention.ledger: expected 'off' or at least retention.runs (90d): "
                    + "a run's calls are rolled up only once its requests are pruned, got 30d"
            ),
            (
                "retention:\n  ledger: 12x\n",
                "offpeak.yaml:2:11: retention.ledger: expected a duration from 1s to 3650d (10 years), like 90s, 10m, 24h, "
                    + "7d or 1h30m, got '12x'"
            ),
        ] {
            do {
                _ = try WorkspaceConfigParser.parse(yaml: yaml, path: "offpeak.yaml")
                Issue.record("\(yaml) was accepted")
            } catch {
                #expect(error.status == .configuration)
                #expect(error.description == message)
            }
        }
    }
}
