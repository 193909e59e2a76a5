import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Issue 24, item 1: a research item whose prompt (with its fetched sources) is byte-identical to
/// one answered before is answered from the cache whatever `cache_ttl` says, and `index.json` says
/// what changed since the job's previous run. `cache_ttl: 0` puts every answer and source past its
/// TTL at once, as a day's wait would.
@Suite(.ownThreads) struct ResearchReuseTests {
    static func workspace(sim: SimProcess, reuse: String?, extra: String = "") throws -> TemporaryWorkspace {
        for name in ["alpha", "beta", "gamma"] {
            try sim.setSource(name, content: "The \(name) page says \(name) is steady.")
        }
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\nhttp: {max_retries: 1}\n")
        try workspace.write(
            "jobs/watch.yaml",
            """
            kind: research
            template: "What does the page say? {{item}}"
            items:
              - {id: alpha, item: "Be short.", sources: ["\(sim.url)/sources/alpha"]}
              - {id: beta, item: "Be short.", sources: ["\(sim.url)/sources/beta"]}
              - {id: gamma, item: "Be short.", sources: ["\(sim.url)/sources/gamma"]}
            cache_ttl: 0s
            batching: off
            \(reuse.map { "reuse: \($0)" } ?? "")
            \(extra)
            """)
        return workspace
    }

    /// The job's `index.json` (its times are ISO 8601).
    static func index(_ workspace: TemporaryWorkspace, job: String = "watch") throws -> OutputWriter.Index {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(
            OutputWriter.Index.self, from: Data((workspace.read("out/\(job)/index.json") ?? "").utf8))
    }

    /// Each item's `change` in `out/watch/index.json`, by item id.
    static func changes(_ workspace: TemporaryWorkspace, job: String = "watch") throws -> [String: String] {
        let index = try Self.index(workspace, job: job)
        return Dictionary(uniqueKeysWithValues: index.items.map { ($0.id, $0.change?.rawValue ?? "-") })
    }

    @Test func anUnchangedItemIsReusedPastItsTTLAndAChangedOneIsAskedAgain() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, reuse: nil)
        let first = try CachedRunTests.run(workspace, job: "watch")
        #expect(first.status == .ok, "\(first.message)")
        #expect(first.spend.calls == 3)
        #expect(try Self.changes(workspace) == ["alpha": "new", "beta": "new", "gamma": "new"])
        let answers = workspace.snapshot("out/watch").filter { $0.key != "index.json" }

        // Every answer and source is past its TTL: the sources are revalidated (304), the prompts
        // are the same, and so are the answers, at no cost.
        let second = try CachedRunTests.run(workspace, job: "watch")
        #expect(second.status == .ok, "\(second.message)")
        #expect(second.spend.calls == 0)
        #expect(second.run.itemsCached == 3)
        #expect(second.spend.naiveDollars > 0, "the ledger records what the reuse saved")
        #expect((try sim.stats()["sources"] as? [String: Int])?["not_modified"] == 3)
        #expect(
            try Self.changes(workspace) == ["alpha": "unchanged", "beta": "unchanged", "gamma": "unchanged"])
        #expect(workspace.snapshot("out/watch").filter { $0.key != "index.json" } == answers)

        try sim.setSource("beta", content: "The beta page now says beta moved.")
        let third = try CachedRunTests.run(workspace, job: "watch")
        #expect(third.spend.calls == 1, "only the changed page's item is asked again")
        #expect(
            try Self.changes(workspace) == ["alpha": "unchanged", "beta": "changed", "gamma": "unchanged"])
        // Each entry cites the source behind its answer: the URL, when that copy was fetched, its
        // validators and a hash of its text.
        let beta = try #require(try Self.index(workspace).items.first { $0.id == "beta" }?.sources?.first)
        #expect(beta.url == "\(sim.url)/sources/beta")
        #expect(beta.sha256 == SHA256.hex("The beta page now says beta moved."))
        #expect(beta.etag?.isEmpty == false && beta.lastModified?.isEmpty == false)
        #expect((workspace.read("out/watch/index.json") ?? "").contains("\"fetched_at\" : \"20"), "ISO 8601")

        let refreshed = try CachedRunTests.run(workspace, job: "watch", policy: .refresh)
        #expect(refreshed.spend.calls == 3, "--refresh still asks again")
        #expect((try sim.stats()["calls"] as? Int) == 7)
    }

    /// The digest: asked once the items are settled, over the new and changed items only; a run in
    /// which nothing changed asks none and leaves the last `digest.md`.
    @Test func aDigestIsAskedOverWhatChangedAndNotWhenNothingDid() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(
            sim: sim, reuse: nil,
            extra: "digest: {template: \"What changed ({{count}})?\\n{{changes}}\", max_tokens: 300}")
        let store = try workspace.openStore()
        func digestPrompt(_ run: RunRecord) throws -> String? {
            try store.runs.requests(runID: run.id).first { $0.itemId == "#digest" }?.completionRequest()
                .messages.first?.content
        }
        let first = try CachedRunTests.run(workspace, job: "watch")
        #expect(first.status == .ok, "\(first.message)")
        #expect(first.spend.calls == 4, "three items and the digest")
        #expect(first.run.itemsTotal == 3 && first.run.itemsDone == 3, "the digest is not an item")
        let digest = try #require(workspace.read("out/watch/digest.md"))
        #expect(!digest.isEmpty)
        let prompt = try #require(try digestPrompt(first.run))
        #expect(prompt.hasPrefix("What changed (3)?\n<item id=\"alpha\" change=\"new\">\n"))
        let index = try Self.index(workspace)
        #expect(index.digest == "digest.md" && index.items.count == 3)

        let quiet = try CachedRunTests.run(workspace, job: "watch")
        #expect(quiet.spend.calls == 0, "nothing changed: no item call, no digest call")
        #expect(try digestPrompt(quiet.run) == nil)
        #expect(workspace.read("out/watch/digest.md") == digest, "the last digest stays")

        try sim.setSource("gamma", content: "The gamma page now says gamma fell.")
        let changed = try CachedRunTests.run(workspace, job: "watch")
        #expect(changed.spend.calls == 2, "the changed item and the digest")
        let only = try #require(try digestPrompt(changed.run))
        #expect(only.hasPrefix("What changed (1)?\n<item id=\"gamma\" change=\"changed\">\n"))
        #expect(!only.contains("alpha") && !only.contains("beta"))
        #expect(workspace.read("out/watch/digest.md") != digest)
    }

    @Test func aDigestTemplateMustNameTheChanges() throws {
        let workspace = try TemporaryWorkspace()
        #expect {
            try JobSpecParser.parse(
                yaml:
                    "kind: research\ntemplate: '{{item}}'\nitems: [a]\ndigest: {template: 'Sum up {{item}}'}\n",
                path: "jobs/r.yaml", workspace: workspace.root)
        } throws: { error in
            (error as? OffpeakError)?.description.hasPrefix(
                "jobs/r.yaml:4:20: digest.template: expected a template naming {{changes}}") == true
        }
        let spec = try JobSpecParser.parse(
            yaml:
                "kind: research\ntemplate: '{{item}}'\nitems: [a]\nmax_tokens: 90\ndigest: {template: '{{changes}}'}\n",
            path: "jobs/r.yaml", workspace: workspace.root)
        #expect(spec.digest?.maxTokens == 90, "the job's max_tokens by default")
        #expect {
            try JobSpecParser.parse(
                yaml: "kind: research\ntemplate: '{{item}}'\nitems: [{id: '#digest', item: x}]\n",
                path: "jobs/r.yaml",
                workspace: workspace.root)
        } throws: { error in
            (error as? OffpeakError)?.description.contains("id '#digest' is kept for the job's digest")
                == true
        }
    }

    @Test func reuseTTLAsksAgainOnceTheTTLHasPassed() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, reuse: "ttl")
        #expect(try CachedRunTests.run(workspace, job: "watch").spend.calls == 3)
        let second = try CachedRunTests.run(workspace, job: "watch")
        #expect(second.spend.calls == 3)
        #expect(
            try Self.changes(workspace) == ["alpha": "unchanged", "beta": "unchanged", "gamma": "unchanged"])
    }

    /// A tick purges what is past its TTL before its jobs run; the answers kept for reuse stay, and
    /// so do the sources behind them, so the next run revalidates them (a `304`) instead of fetching
    /// them whole.
    @Test func purgingExpiredEntriesKeepsTheAnswersAndSourcesKeptForReuse() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, reuse: nil)
        #expect(try CachedRunTests.run(workspace, job: "watch").spend.calls == 3)
        let cache = ResponseCache(
            store: try workspace.openStore(), maxBytes: 1 << 30, logger: Logger(label: "t"))
        let purged = try cache.purge(.expired)
        #expect(purged == CachePurge(removed: 0, keptForReuse: 3, keptSources: 3))
        #expect(
            purged.text
                == "removed 0 entries; kept past their TTL for jobs with `reuse: unchanged`: 3 answers that "
                + "they reuse while their prompt is unchanged, and 3 sources that they revalidate with a "
                + "conditional request (`--job JOB` or `--all` removes them)\n")
        let second = try CachedRunTests.run(workspace, job: "watch")
        #expect(second.spend.calls == 0)
        let sources = try #require(try sim.stats()["sources"] as? [String: Int])
        #expect(sources["fetches"] == 6 && sources["not_modified"] == 3, "revalidated, not fetched whole")
        #expect(try cache.purge(.job("watch")) == CachePurge(removed: 7), "answers, sources and robots.txt")
    }

    /// A job with `reuse: ttl` keeps nothing past its TTL: the purge takes its sources.
    @Test func purgingExpiredEntriesTakesWhatAReuseTTLJobSaved() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim: sim, reuse: "ttl")
        #expect(try CachedRunTests.run(workspace, job: "watch").spend.calls == 3)
        let cache = ResponseCache(
            store: try workspace.openStore(), maxBytes: 1 << 30, logger: Logger(label: "t"))
        let purged = try cache.purge(.expired)
        #expect(purged == CachePurge(removed: 3), "its 3 sources (with cache_ttl: 0s it keeps no answer)")
    }

    @Test func reuseIsParsedAndCheckedAndDefaultsByKind() throws {
        let workspace = try TemporaryWorkspace()
        let research = try JobSpecParser.parse(
            yaml: "kind: research\ntemplate: '{{item}}'\nitems: [a]\n", path: "jobs/r.yaml",
            workspace: workspace.root)
        #expect(research.reuse == nil && research.reusesUnchanged)
        let prompt = try JobSpecParser.parse(
            yaml: "kind: prompt\ntemplate: '{{item}}'\nitems: [a]\n", path: "jobs/p.yaml",
            workspace: workspace.root)
        #expect(!prompt.reusesUnchanged)
        let chosen = try JobSpecParser.parse(
            yaml: "kind: prompt\ntemplate: '{{item}}'\nitems: [a]\nreuse: unchanged\n", path: "jobs/p.yaml",
            workspace: workspace.root)
        #expect(chosen.reusesUnchanged)
        #expect(CanonicalJSON.text(prompt).contains("reuse") == false, "a spec without it hashes as before")
        #expect {
            try JobSpecParser.parse(
                yaml: "kind: research\ntemplate: '{{item}}'\nitems: [a]\nreuse: always\n",
                path: "jobs/r.yaml",
                workspace: workspace.root)
        } throws: { error in
            (error as? OffpeakError)?.description.hasPrefix(
                "jobs/r.yaml:4:8: reuse: expected one of unchanged, ttl")
                == true
        }
    }
}
