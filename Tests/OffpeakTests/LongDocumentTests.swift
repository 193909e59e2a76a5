import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Long documents end to end: chunks summarized, summaries reduced, every step a checkpointed
/// request, against a real `offpeak-sim` over HTTP and a real SQLite store.
@Suite(.ownThreads) struct LongDocumentTests {
    /// `count` pages of about 3,000 characters: paragraphs of numbered sentences, each different.
    static func pages(_ count: Int) -> String {
        var text = ""
        for page in 1...count {
            text += "## Page \(page)\n\n"
            var length = 0
            var line = 1
            while length < 3000 {
                let paragraph = (0..<6).map { offset in
                    "On page \(page), line \(line + offset) records value \((page * 31 + line + offset) % 997)."
                }.joined(separator: " ")
                text += paragraph + "\n\n"
                length += paragraph.utf8.count + 2
                line += 6
            }
        }
        return text
    }

    /// A workspace with `docs/NAME` files and a summarize job `docs` over them.
    static func workspace(
        sim: SimProcess, documents: [String: String], chunking: String? = nil, budget: String = ""
    ) throws -> TemporaryWorkspace {
        let workspace = try TemporaryWorkspace()
        try pointAt(sim, workspace)
        for (name, text) in documents { try workspace.write("docs/\(name)", text) }
        try writeJob(workspace, chunking: chunking, budget: budget)
        return workspace
    }

    /// - Parameter limits: an offpeak.yaml `limits:` line (one call in flight, for a test whose
    ///   premise counts calls up to a moment).
    static func pointAt(_ sim: SimProcess, _ workspace: TemporaryWorkspace, limits: String = "") throws {
        try workspace.write(
            "offpeak.yaml",
            "provider: sim\nbase_url: \(sim.url)\nhttp: {connect_timeout: 1s, timeout: 10s, max_retries: 1}\n"
                + limits
        )
    }

    static func writeJob(_ workspace: TemporaryWorkspace, chunking: String? = nil, budget: String = "") throws
    {
        try workspace.write(
            "jobs/docs.yaml",
            """
            kind: summarize
            tier: fast
            inputs: [docs/*.md]
            max_tokens: 200
            batching: off
            \(chunking.map { "chunking: \($0)" } ?? "")
            \(budget)
            """)
    }

    static func run(_ workspace: TemporaryWorkspace, options: JobRunner.Options = .init()) throws
        -> RunOutcome
    {
        let context = try WorkspaceContext(
            workspace: Workspace(root: workspace.root), environment: try workspace.environment(),
            logger: Logger(label: "test"))
        return try context.run(try context.loadJob("docs"), options: options)
    }

    static func requests(_ workspace: TemporaryWorkspace, run: String) throws -> [RequestRecord] {
        try workspace.openStore().runs.requests(runID: run)
    }

    static func calls(_ sim: SimProcess) throws -> Int {
        try #require(try sim.stats()["calls"] as? Int)
    }

    /// How many chunks the default chunking makes of `text`.
    static func chunkCount(_ text: String, maxTokens: Int = 6000, overlap: Int = 200) -> Int {
        DocumentChunker(maxTokens: maxTokens, overlap: overlap).chunks(of: text).count
    }

    @Test func aLongDocumentIsMappedThenReducedAndShortOnesAreOneCallEach() throws {
        let sim = try SimProcess()
        let long = Self.pages(20)
        let chunks = Self.chunkCount(long)
        #expect(chunks == 3)
        let workspace = try Self.workspace(
            sim: sim,
            documents: [
                "a-short.md": "# A\n\nA short note. It says little.\n", "big.md": long,
                "z-short.md": "# Z\n\nAnother short note.\n",
            ])
        let outcome = try Self.run(workspace)
        #expect(outcome.status == .ok, "\(outcome.message)")
        #expect(outcome.run.itemsTotal == 3 && outcome.run.itemsDone == 3, "steps are not items")
        #expect(
            try Self.calls(sim) == 2 + chunks + 1, "one call per short item, per chunk, and the final one")
        #expect(outcome.spend.calls == 2 + chunks + 1)

        let rows = try Self.requests(workspace, run: outcome.run.id)
        #expect(
            rows.filter { $0.source == .chunk }.map(\.itemId)
                == (1...chunks).map { "docs/big.md#chunk-000\($0)" })
        #expect(rows.filter { $0.source == .spec }.count == 3)
        #expect(rows.allSatisfy { $0.state == .done })
        let mapRow = try #require(rows.first { $0.itemId == "docs/big.md#chunk-0002" })
        let map = try mapRow.completionRequest()
        #expect(map.messages[0].content.hasPrefix("Summarize part 2 of 3 of the document big.md."))
        #expect(TokenEstimator.inputTokens(map) < 6100, "a chunk prompt fits comfortably")

        let files = workspace.snapshot("out/docs")
        #expect(files.keys.sorted() == ["docs-a-short.md", "docs-big.md", "docs-z-short.md", "index.json"])
        #expect(files["docs-big.md"]?.hasPrefix("On page 1, line 1 records value 32.") == true)
        #expect(files["docs-a-short.md"] == "A short note. It says little.\n")
        let index = try JSONDecoder().decode(
            OutputWriter.Index.self, from: Data((files["index.json"] ?? "").utf8))
        #expect(index.items.map(\.id) == ["docs/a-short.md", "docs/big.md", "docs/z-short.md"])
    }

    @Test func summariesThatDoNotFitOnePromptAreReducedLevelByLevel() throws {
        let sim = try SimProcess()
        let long = Self.pages(12)
        let chunks = Self.chunkCount(long, maxTokens: 300, overlap: 20)
        let workspace = try Self.workspace(
            sim: sim, documents: ["big.md": long], chunking: "{max_tokens: 300, overlap: 20}")
        let outcome = try Self.run(workspace)
        #expect(outcome.status == .ok, "\(outcome.message)")
        let rows = try Self.requests(workspace, run: outcome.run.id)
        let reduces = rows.filter { $0.source == .reduce }
        let levelTwo = reduces.filter { $0.itemId.hasPrefix("docs/big.md#reduce-2-") }
        let levelThree = reduces.filter { $0.itemId.hasPrefix("docs/big.md#reduce-3-") }
        #expect(rows.filter { $0.source == .chunk }.count == chunks)
        #expect(levelTwo.count > 2 && levelTwo.count <= chunks / 2)
        #expect(!levelThree.isEmpty && levelThree.count <= levelTwo.count / 2)
        #expect(try Self.calls(sim) == chunks + reduces.count + 1)
        #expect(outcome.run.itemsTotal == 1 && outcome.run.itemsDone == 1)
        for row in reduces {
            let prompt = try row.completionRequest().messages[0].content
            #expect(prompt.hasPrefix("These are summaries of consecutive parts ("))
            #expect(TokenEstimator.tokens(prompt) < 600, "each reduce prompt holds only a few summaries")
        }
        let output = try #require(workspace.read("out/docs/docs-big.md"))
        #expect(output.hasPrefix("On page 1, line 1 records value 32."))
    }

    /// The uninterrupted reference: the output and how many calls it took.
    static func reference(_ documents: [String: String]) throws -> (output: String, calls: Int) {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, documents: documents)
        let outcome = try Self.run(workspace)
        #expect(outcome.status == .ok, "\(outcome.message)")
        return (try #require(workspace.read("out/docs/docs-big.md")), try Self.calls(sim))
    }

    /// A 300-page document stopped by a budget after the first call, half way through its chunks,
    /// and right after its last chunk: the next run does only the rest, and the answer is the same.
    @Test func aThreeHundredPageDocumentResumesMidWayAndRepeatsNoCall() throws {
        let long = Self.pages(300)
        let chunks = Self.chunkCount(long)
        let reference = try Self.reference(["big.md": long])
        #expect(reference.calls == chunks + 1, "\(chunks) chunks and the final call")
        for stop in [1, chunks / 2, chunks] {
            let sim = try SimProcess()
            let workspace = try Self.workspace(
                sim: sim, documents: ["big.md": long], budget: "budget: {max_calls: \(stop)}")
            let first = try Self.run(workspace)
            #expect(first.run.state == .interrupted && first.run.budgetStop == "max_calls")
            #expect(first.run.itemsDone == 0 && first.run.itemsTotal == 1)
            #expect(try Self.calls(sim) == stop)
            let done = try Self.requests(workspace, run: first.run.id).filter { $0.state == .done }
            #expect(done.count == stop && done.allSatisfy { $0.source == .chunk })

            try Self.writeJob(workspace)
            let second = try Self.run(workspace)
            #expect(second.status == .ok, "\(second.message)")
            #expect(second.run.id == first.run.id, "the same run resumes")
            #expect(try Self.calls(sim) == reference.calls, "stopped after \(stop): no call repeated")
            #expect(workspace.read("out/docs/docs-big.md") == reference.output)
            #expect(second.run.itemsDone == 1)
        }
    }

    /// The provider goes away in the middle of the map step (the sim is killed): the run is
    /// interrupted, and against a new sim it makes only the calls the first one did not answer.
    @Test func simKilledMidMapResumesWithOnlyTheRemainingCalls() throws {
        let long = Self.pages(300)
        let reference = try Self.reference(["big.md": long])
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, documents: ["big.md": long])
        // One call at a time: the sim dies right after the 12th answer, with no other call out.
        try Self.pointAt(sim, workspace, limits: "limits: {sim: {in_flight: 1}}\n")
        let sent = CallCounter()
        let options = JobRunner.Options(progress: { _ in
            if sent.next() == 12 { sim.kill() }
        })
        let first = try Self.run(workspace, options: options)
        #expect(first.status == .temporaryFailure, "\(first.message)")
        #expect(first.run.state == .waiting, "offline: the provider is unreachable")
        let answered = try Self.requests(workspace, run: first.run.id).filter { $0.state == .done }.count
        #expect(answered == 12)

        let second = try SimProcess()
        try Self.pointAt(second, workspace)
        let resumed = try Self.run(workspace)
        #expect(resumed.status == .ok, "\(resumed.message)")
        #expect(try Self.calls(second) == reference.calls - 12)
        #expect(workspace.read("out/docs/docs-big.md") == reference.output)
    }

    /// A document changed while its run was interrupted: chunks whose text is unchanged keep their
    /// summaries, the others are asked anew, and the answer is the changed document's.
    @Test func aChangedDocumentKeepsOnlyTheSummariesOfUnchangedChunks() throws {
        let original = Self.pages(60)
        // Same length, in the first chunk only: the other chunks stay as they were.
        let changed = original.replacingOccurrences(
            of: "On page 1, line 1 records value 32.", with: "On page 1, line 1 records value 99.")
        #expect(changed != original)
        let chunks = Self.chunkCount(changed)
        let reference = try Self.reference(["big.md": changed])
        #expect(reference.output.hasPrefix("On page 1, line 1 records value 99."))
        let sim = try SimProcess()
        let workspace = try Self.workspace(
            sim: sim, documents: ["big.md": original], budget: "budget: {max_calls: \(chunks)}")
        let first = try Self.run(workspace)
        #expect(first.run.state == .interrupted, "every chunk is summarized, the final call is not made")
        try workspace.write("docs/big.md", changed)
        try Self.writeJob(workspace)
        let second = try Self.run(workspace)
        #expect(second.status == .ok, "\(second.message)")
        #expect(second.run.id == first.run.id)
        #expect(try Self.calls(sim) == chunks + 2, "the first chunk again, and the final call")
        #expect(workspace.read("out/docs/docs-big.md") == reference.output)
        let rows = try Self.requests(workspace, run: second.run.id)
        #expect(rows.filter { $0.source == .chunk }.count == chunks)
        let firstChunk = try #require(rows.first { $0.itemId == "docs/big.md#chunk-0001" })
        let answer = try workspace.openStore().runs.results(runID: second.run.id)[
            firstChunk.id]
        #expect(answer?.text.hasPrefix("On page 1, line 1 records value 99.") == true)
    }
}

/// Counts calls from the progress callback, which the runner calls from its own thread.
private final class CallCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func next() -> Int {
        lock.withLock {
            count += 1
            return count
        }
    }
}
