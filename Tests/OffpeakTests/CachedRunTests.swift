import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// The cache in front of the provider, and research sources, through real runs against the sim.
@Suite(.ownThreads) struct CachedRunTests {
    static func research(sim: SimProcess, sources: String = "sources/heat-pumps") throws -> TemporaryWorkspace
    {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\nhttp: {max_retries: 1}\n")
        try workspace.write(
            "jobs/brief.yaml",
            """
            kind: research
            system: Answer from the sources only.
            template: "Question: {{item}}"
            sources: ["\(sim.url)/\(sources)"]
            items:
              - {id: q1, item: "What do the sources say first? Quote it."}
              - {id: q2, item: "What is the main claim? Be short.", sources: ["\(sim.url)/sources/tides"]}
            cache_ttl: 1h
            batching: off
            """)
        return workspace
    }

    static func run(
        _ workspace: TemporaryWorkspace, job: String = "brief", policy: RequestRecord.CachePolicy = .normal
    )
        throws -> RunOutcome
    {
        let context = try WorkspaceContext(
            workspace: Workspace(root: workspace.root), environment: try workspace.environment(),
            logger: Logger(label: "test"))
        return try context.run(try context.loadJob(job), options: JobRunner.Options(cachePolicy: policy))
    }

    static func answers(_ workspace: TemporaryWorkspace) -> [String: String] {
        workspace.snapshot("out/brief").filter { $0.key != "index.json" }
    }

    @Test func aResearchJobRunTwiceWithinItsTTLMakesNoCallsTheSecondTime() throws {
        let sim = try SimProcess()
        let workspace = try Self.research(sim: sim)
        let first = try Self.run(workspace)
        #expect(first.status == .ok, "\(first.message)")
        #expect(first.spend.calls == 2)
        let firstAnswers = Self.answers(workspace)
        #expect(firstAnswers.count == 2)
        let sources = try #require(try sim.stats()["sources"] as? [String: Int])
        #expect(sources["fetches"] == 2)

        let second = try Self.run(workspace)
        #expect(second.status == .ok)
        #expect(second.spend.calls == 0)
        #expect(second.run.itemsCached == 2)
        #expect((try sim.stats()["calls"] as? Int) == 2, "no provider call the second time")
        #expect(
            (try sim.stats()["sources"] as? [String: Int])?["fetches"] == 2, "sources came from the cache")
        #expect(Self.answers(workspace) == firstAnswers)
        #expect(second.spend.naiveDollars > 0, "the ledger records what the hits saved")
        let stats = try ResponseCache(
            store: try workspace.openStore(), maxBytes: 1 << 30,
            logger: Logger(label: "t")
        ).stats()
        #expect(stats.hitsTotal >= 2)
        #expect(stats.savedDollarsTotal > 0)
    }

    @Test func refreshAsksAgainAndNoCacheDoesNotRead() throws {
        let sim = try SimProcess()
        let workspace = try Self.research(sim: sim)
        _ = try Self.run(workspace)
        let refreshed = try Self.run(workspace, policy: .refresh)
        #expect(refreshed.spend.calls == 2)
        let uncached = try Self.run(workspace, policy: .noCache)
        #expect(uncached.spend.calls == 2)
        #expect((try sim.stats()["calls"] as? Int) == 6)
    }

    @Test func anUnreachableSourceNeverFetchedMakesItsItemWaitNotFail() throws {
        let sim = try SimProcess()
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\nhttp: {max_retries: 1}\n")
        try workspace.write(
            "jobs/brief.yaml",
            """
            kind: research
            template: "Question: {{item}} Sources: {{sources}}"
            items:
              - {id: near, item: "What is near? Say it.", sources: ["\(sim.url)/sources/near"]}
              - {id: far, item: "What is far? Say it.", sources: ["http://127.0.0.1:9/far"]}
            batching: off
            """)
        let first = try Self.run(workspace)
        #expect(first.status == .temporaryFailure)
        #expect(first.run.state == .waiting)
        #expect(first.run.itemsDone == 1)
        #expect(first.message.contains("127.0.0.1:9"))
        #expect(workspace.read("out/brief/near.md") != nil)
        #expect(workspace.read("out/brief/far.md") == nil)
        // The source comes back (here: the spec points at a reachable copy): the waiting item runs.
        let spec = try #require(workspace.read("jobs/brief.yaml"))
        try workspace.write(
            "jobs/brief.yaml",
            spec.replacingOccurrences(of: "http://127.0.0.1:9/far", with: "\(sim.url)/sources/far"))
        let second = try Self.run(workspace)
        #expect(second.status == .ok, "\(second.message)")
        #expect(second.run.id == first.run.id)
        #expect(second.run.itemsDone == 2)
    }

    /// A stop signal reaches a source fetch in flight, as it does a provider call: once the grace
    /// is over the fetch is aborted (the server would take 5 s), its item waits, and the run
    /// stops resumable.
    @Test(.timeLimit(.minutes(1))) func aStopSignalAbortsASlowSourceFetch() throws {
        let sim = try SimProcess()
        let server = try LocalHTTPServer()
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\n")
        try workspace.write(
            "jobs/brief.yaml",
            """
            kind: research
            template: "Question: {{item}}"
            items: [{id: slow, item: "What does it say?", sources: ["\(server.url("/slow"))"]}]
            batching: off
            """)
        let context = try WorkspaceContext(
            workspace: Workspace(root: workspace.root), environment: try workspace.environment(),
            logger: Logger(label: "test"))
        let stop = StopSignal()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { stop.request("SIGTERM", grace: 0.2) }
        let started = Date()
        let outcome = try context.run(try context.loadJob("brief"), options: JobRunner.Options(stop: stop))
        #expect(Date().timeIntervalSince(started) < 4, "not the server's 5 s")
        #expect(outcome.status == .temporaryFailure)
        #expect(outcome.run.state == .waiting, "\(outcome.message)")
        #expect(outcome.message.contains("cancelled"), "\(outcome.message)")
        #expect(outcome.callsMade == 0)
        let request = try #require(try context.openStore().runs.requests(runID: outcome.run.id).first)
        #expect(request.state == .waiting)
    }

    @Test func everyParameterThatChangesTheAnswerChangesTheKey() {
        let base = CompletionRequest(
            model: "m", system: "s", messages: [ChatMessage(role: .user, content: "u")], maxTokens: 10,
            temperature: 0.5, topP: 0.9, stop: ["x"])
        let key = RequestPlanner.cacheKey(provider: .anthropic, request: base)
        var variants: [CompletionRequest] = []
        var changed = base
        changed.model = "m2"
        variants.append(changed)
        changed = base
        changed.system = "s2"
        variants.append(changed)
        changed = base
        changed.messages = [ChatMessage(role: .user, content: "u2")]
        variants.append(changed)
        changed = base
        changed.maxTokens = 11
        variants.append(changed)
        changed = base
        changed.temperature = 0.6
        variants.append(changed)
        changed = base
        changed.topP = 0.8
        variants.append(changed)
        changed = base
        changed.stop = ["y"]
        variants.append(changed)
        for variant in variants {
            #expect(RequestPlanner.cacheKey(provider: .anthropic, request: variant) != key, "\(variant)")
        }
        #expect(
            RequestPlanner.cacheKey(provider: .openai, request: base) != key, "the provider is in the key")
        changed = base
        changed.cacheSystemPrompt = true
        #expect(
            RequestPlanner.cacheKey(provider: .anthropic, request: changed) == key, "the cache marker is not")
    }
}
