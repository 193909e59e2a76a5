import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Fallback chains (issue 50, item 1), through the built binary: the configured provider cannot
/// answer (its port refuses connections, it answers 529s, its account is spent) and a second sim,
/// speaking OpenAI's API, answers in its place, at its own model's prices; the first is tried again
/// after the time it asked for. A refused key is the user's to fix, and falls back to nothing.
@Suite(.ownThreads) struct FallbackRunTests {
    static let documents = 8
    static let fallbackModel = "gpt-4.1-mini"

    /// A workspace whose `fast` tier calls `primary` (a sim, Anthropic's API) and falls back to
    /// `fallback` (a sim, OpenAI's API, its key in BACKUP_KEY), one call at a time.
    static func workspace(primary: String, fallback: SimProcess, extra: String = "") throws
        -> TemporaryWorkspace
    {
        let workspace = try TemporaryWorkspace()
        try workspace.write(
            "offpeak.yaml",
            """
            provider: sim
            base_url: \(primary)
            http: {connect_timeout: 2s, timeout: 10s, max_retries: 0}
            limits: {sim: {in_flight: 1}, openai: {in_flight: 1}}
            fallbacks:
              fast:
                - provider: openai
                  model: \(fallbackModel)
                  base_url: \(fallback.url)/v1
                  key_env: BACKUP_KEY
            \(extra)
            """)
        try workspace.writeDocuments(documents)
        try workspace.write(
            "jobs/docs.yaml",
            "kind: summarize\ntier: fast\ninputs: [docs/*.md]\nmax_tokens: 100\nbatching: off\n")
        return workspace
    }

    static let environment: [String: String?] = ["BACKUP_KEY": "sk-backup", "OPENAI_API_KEY": nil]

    static func okCalls(_ sim: SimProcess) throws -> Int { try sim.stats()["ok_calls"] as? Int ?? -1 }
    static func calls(_ sim: SimProcess) throws -> Int { try sim.stats()["calls"] as? Int ?? -1 }

    /// `costs --by model --json`'s lines, by model: calls and dollars.
    static func costsByModel(_ workspace: TemporaryWorkspace, environment: [String: String?] = environment)
        throws -> [String: [String: Any]]
    {
        let costs = try workspace.offpeak(["costs", "--by", "model", "--json"], environment: environment)
        #expect(costs.status == 0, "\(costs.stderr)")
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(costs.stdout.utf8)) as? [String: Any])
        let lines = json["lines"] as? [[String: Any]] ?? []
        return Dictionary(
            uniqueKeysWithValues: lines.compactMap { line in
                guard let key = line["key"] as? String, let spend = line["spend"] as? [String: Any] else {
                    return nil
                }
                return (key, spend)
            })
    }

    @Test func aPrimaryThatRefusesConnectionsIsAnsweredForByTheFallback() throws {
        let fallback = try SimProcess()
        let gone = try SimProcess()
        gone.kill()  // its port refuses connections now
        let workspace = try Self.workspace(primary: gone.url, fallback: fallback)
        let run = try workspace.offpeak(["run", "docs"], environment: Self.environment)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout.hasPrefix(
                "job docs: 8 of 8 items answered (8 now); 8 answered by the fallback openai gpt-4.1-mini\n"))
        #expect(try Self.okCalls(fallback) == Self.documents, "every item answered once, by the fallback")
        let costs = try Self.costsByModel(workspace)
        #expect(costs["claude-haiku-4-5"]?["calls"] as? Int == 1, "one call found the primary down")
        #expect(costs["claude-haiku-4-5"]?["failed_calls"] as? Int == 1)
        try Self.expectBilledAsTheSimBilled(costs[Self.fallbackModel], fallback, calls: Self.documents)
        let index = try #require(workspace.read("out/docs/index.json"))
        #expect(
            index.components(separatedBy: "\"model\" : \"\(Self.fallbackModel)\"").count - 1 == Self.documents
        )
    }

    /// The fallback's line of `costs --by model` is what its sim billed, at its model's prices.
    static func expectBilledAsTheSimBilled(_ line: [String: Any]?, _ sim: SimProcess, calls: Int) throws {
        let line = try #require(line)
        let billed = try sim.billed()
        let input = try #require(billed["input_tokens"])
        let output = try #require(billed["output_tokens"])
        #expect(line["calls"] as? Int == calls)
        #expect(line["input_tokens"] as? Int == input && line["output_tokens"] as? Int == output)
        let price = try #require(PriceTable.bundled.price(for: Self.fallbackModel))
        let dollars =
            Double(input) * (price.inputCostPerToken ?? 0) + Double(output) * (price.outputCostPerToken ?? 0)
        #expect(abs((line["dollars"] as? Double ?? -1) - dollars) < 1e-9, "at \(Self.fallbackModel)'s prices")
    }

    /// What the configured provider answered before is reused while a fallback answers: the cache
    /// is asked under the provider's keys first, so the fallback is called only for what is new.
    @Test func answersThePrimaryCachedAreReusedWhileTheFallbackAnswers() throws {
        let fallback = try SimProcess()
        let primary = try SimProcess()
        let workspace = try Self.workspace(primary: primary.url, fallback: fallback)
        #expect(try workspace.offpeak(["run", "docs"], environment: Self.environment).status == 0)
        #expect(try Self.okCalls(primary) == Self.documents)
        primary.kill()
        // Another job finds the primary down, and the store says so to every later run.
        try workspace.write("notes/a.md", "# A note\n\nThe office moves in March. Bring your badge.\n")
        try workspace.write(
            "jobs/notes.yaml",
            "kind: summarize\ntier: fast\ninputs: [notes/*.md]\nmax_tokens: 100\nbatching: off\n")
        #expect(try workspace.offpeak(["run", "notes"], environment: Self.environment).status == 0)
        #expect(try Self.okCalls(fallback) == 1)
        // The documents again, one of them new: the eight the primary answered come from the cache.
        try workspace.write("docs/doc-009.md", "# Document 9\n\nThis one is new. It arrived today.\n")
        let again = try workspace.offpeak(["run", "docs"], environment: Self.environment)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(
            again.stdout.hasPrefix(
                "job docs: 9 of 9 items answered (9 now); 1 answered by the fallback openai gpt-4.1-mini\n"),
            "\(again.stdout)")
        #expect(try Self.okCalls(fallback) == 2, "only the new document went to the fallback")
    }

    @Test func anOverloadedPrimaryIsTriedAgainAfterItsRetryAfterAndAnswersAgain() throws {
        let primary = try SimProcess(arguments: ["--overloaded-retry-after", "2", "--latency-ms", "300"])
        let fallback = try SimProcess(arguments: ["--latency-ms", "500"])
        try primary.queueFaults(["529"])
        let workspace = try Self.workspace(primary: primary.url, fallback: fallback)
        let run = try workspace.offpeak(["run", "docs", "--verbose"], environment: Self.environment)
        #expect(run.status == 0, "\(run.stderr)")
        let answeredByPrimary = try Self.okCalls(primary)
        let answeredByFallback = try Self.okCalls(fallback)
        #expect(answeredByPrimary + answeredByFallback == Self.documents, "every item answered once")
        #expect(try Self.calls(primary) == answeredByPrimary + 1, "one 529, then answers")
        #expect(answeredByFallback >= 2, "the fallback answered while the primary asked to be left 2 s")
        #expect(answeredByPrimary >= 1, "the primary answered again once its retry-after had passed")
        #expect(
            run.stdout.hasPrefix(
                "job docs: 8 of 8 items answered (8 now); \(answeredByFallback) answered by the fallback openai gpt-4.1-mini\n"
            ))
        #expect(
            run.stderr.contains(
                "calls go to the fallback openai \(Self.fallbackModel): sim claude-haiku-4-5 until "))
        #expect(
            run.stderr.contains(
                "sim claude-haiku-4-5 is tried again, its outage over; calls go back to it from openai \(Self.fallbackModel)"
            ))
        let costs = try Self.costsByModel(workspace)
        #expect(costs["claude-haiku-4-5"]?["calls"] as? Int == answeredByPrimary + 1)
        try Self.expectBilledAsTheSimBilled(costs[Self.fallbackModel], fallback, calls: answeredByFallback)
    }

    @Test func aSpentAccountFallsBackAndEveryProcessOnTheStoreSkipsIt() throws {
        let primary = try SimProcess(arguments: ["--fault-rate", "quota=1"])
        let fallback = try SimProcess()
        let workspace = try TemporaryWorkspace()
        try workspace.write(
            "offpeak.yaml",
            """
            provider: openai
            base_url: \(primary.url)/v1
            models: {openai: {fast: gpt-4.1-nano}}
            http: {connect_timeout: 2s, timeout: 10s, max_retries: 2}
            limits: {sim: {in_flight: 1}, openai: {in_flight: 1}}
            fallbacks:
              - provider: sim
                base_url: \(fallback.url)
            """)
        try workspace.writeDocuments(Self.documents)
        try workspace.write(
            "jobs/docs.yaml",
            "kind: summarize\ntier: fast\ninputs: [docs/*.md]\nmax_tokens: 100\nbatching: off\n")
        let environment: [String: String?] = ["OPENAI_API_KEY": "sk-spent"]
        let first = try workspace.offpeak(["run", "docs"], environment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(try Self.calls(primary) == 1, "insufficient_quota is not retried")
        #expect(try Self.okCalls(fallback) == Self.documents)
        // Another process, a minute not yet past: the store says the primary is spent; it is not asked.
        for index in 1...3 {
            try workspace.write(
                "docs/more-\(index).md", "# More \(index)\n\nAnother document, number \(index).\n")
        }
        let second = try workspace.offpeak(["run", "docs"], environment: environment)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try Self.calls(primary) == 1)
        #expect(try Self.okCalls(fallback) == Self.documents + 3)
        // status says what is down, until when, and why.
        let status = try workspace.offpeak(["status"], environment: environment)
        let down = status.stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix("down: ") }
        #expect(down.count == 1, "\(status.stdout)")
        #expect(down.first?.hasPrefix("down: openai \(primary.url)/v1 gpt-4.1-nano until ") == true)
        #expect(
            down.first?.hasSuffix(
                "/v1/chat/completions: You exceeded your current quota, please check your plan and billing details. "
                    + "For more information on this error, read the docs: "
                    + "https://platform.openai.com/docs/guides/error-codes/api-errors.") == true)
        // An estimate says who would answer now, and prices that.
        let estimate = try workspace.offpeak(["estimate", "docs"], environment: environment)
        #expect(estimate.status == 0, "\(estimate.stderr)")
        #expect(
            estimate.stdout.hasPrefix(
                "estimate for job docs (nothing sent, nothing written): claude-haiku-4-5 on sim\n"))
        let note = try #require(estimate.stdout.split(separator: "\n").last.map(String.init))
        #expect(note.hasPrefix("openai gpt-4.1-nano is down until "))
        #expect(
            note.hasSuffix(
                "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.): estimated for sim claude-haiku-4-5, which would answer"
            ))
        let costs = try Self.costsByModel(workspace)
        #expect(costs["claude-haiku-4-5"]?["calls"] as? Int == Self.documents + 3)
        #expect(costs["gpt-4.1-nano"]?["failed_calls"] as? Int == 1)
    }

    @Test func aRefusedKeyStopsTheRunAndNeverFallsBack() throws {
        let primary = try SimProcess(arguments: ["--require-key", "sk-right"])
        let fallback = try SimProcess()
        let workspace = try Self.workspace(primary: primary.url, fallback: fallback)
        try workspace.write(
            "offpeak.yaml",
            (workspace.read("offpeak.yaml") ?? "").replacingOccurrences(
                of: "provider: sim\n", with: "provider: anthropic\n"
            )
            .replacingOccurrences(of: "{sim: {in_flight: 1}", with: "{anthropic: {in_flight: 1}"))
        try workspace.write(
            "offpeak.yaml",
            (workspace.read("offpeak.yaml") ?? "") + "models: {anthropic: {fast: claude-haiku-4-5}}\n")
        var environment = Self.environment
        environment["ANTHROPIC_API_KEY"] = "sk-wrong"
        let run = try workspace.offpeak(["run", "docs"], environment: environment)
        #expect(run.status == 78, "\(run.stdout) \(run.stderr)")
        #expect(try Self.calls(fallback) == 0, "a refused key is the user's to fix: no fallback")
        #expect(try Self.calls(primary) == 1)
    }
}
