import Foundation
import GRDB
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Issue 50, item 4: Anthropic's 1-hour prompt cache where a prefix is reused later than five
/// minutes (a provider batch, answered over hours): written at twice the input price instead of
/// 1.25 times, read at a tenth. The sim answers a batch's requests over `--batch-spread` seconds of
/// its cache's clock, as a provider works through one.
@Suite(.ownThreads, .serialized) struct LongPromptCacheTests {
    /// A system prompt well over the 1,024-token minimum for caching.
    static let system = String(repeating: "Classify the ticket as billing, bug or other. ", count: 120)

    static func request(ttl: PromptCacheTTL?) -> CompletionRequest {
        var request = CompletionRequest(
            model: "claude-sonnet-4-5", system: system, messages: [.init(role: .user, content: "hi")],
            maxTokens: 20, cacheSystemPrompt: true)
        request.cacheTTL = ttl
        return request
    }

    @Test func anHourIsAskedForOnTheWireReadFromTheUsageAndPricedAtTwiceTheInput() throws {
        func cacheControl(_ ttl: PromptCacheTTL?) throws -> [String: String]? {
            let body = try AnthropicProvider.requestBody(for: Self.request(ttl: ttl))
            let json = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
            let system = try #require(json["system"] as? [[String: Any]])
            return system.first?["cache_control"] as? [String: String]
        }
        #expect(try cacheControl(.oneHour) == ["type": "ephemeral", "ttl": "1h"])
        #expect(try cacheControl(nil) == ["type": "ephemeral"])
        #expect(try cacheControl(.fiveMinutes) == ["type": "ephemeral"])

        let answer = Data(
            """
            {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
             "content": [{"type": "text", "text": "billing"}], "stop_reason": "end_turn",
             "usage": {"input_tokens": 10, "output_tokens": 2, "cache_creation_input_tokens": 1200,
                       "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 1200},
                       "cache_read_input_tokens": 0}}
            """.utf8)
        let response = try AnthropicProvider.parseResponse(
            answer, for: Self.request(ttl: .oneHour), redactor: Redactor(environment: [:]))
        #expect(response.usage == Usage(input: 10, output: 2, cacheWrite: 1200, cacheWriteHour: 1200))

        // claude-sonnet-4-5: $3/M input; a 5-minute write $3.75/M, an hour's $6/M, a read $0.30/M.
        let price = try #require(PriceTable.bundled.cost(of: "claude-sonnet-4-5"))
        let million = 1_000_000
        #expect(abs(price.dollars(for: Usage(cacheWrite: million), lane: .live) - 3.75) < 1e-9)
        #expect(
            abs(price.dollars(for: Usage(cacheWrite: million, cacheWriteHour: million), lane: .live) - 6)
                < 1e-9)
        #expect(
            abs(price.dollars(for: Usage(cacheWrite: million, cacheWriteHour: million), lane: .batch) - 3)
                < 1e-9)
        // Usage stored before the 1-hour cache decodes with none of its writes an hour's.
        let old = Data(#"{"input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 4, "searches": 0}"#.utf8)
        #expect(
            try JSONDecoder().decode(Usage.self, from: old)
                == Usage(input: 1, output: 2, cacheRead: 3, cacheWrite: 4))
    }

    /// A budget holds back a call's worst case, and a cacheable prefix may be written, at 1.25 times
    /// the input price or twice it for the hour: the worst counts the prefix as written, so a call
    /// whose write would pass `max_dollars` is held, where counting it as input let it go. A model
    /// whose writes cost less than its input (Gemini's stored context) is held at the input price.
    @Test func aBudgetReservesACacheablePrefixAtItsWritePrice() throws {
        let sonnet = try #require(PriceTable.bundled.price(for: "claude-sonnet-4-5"))
        let input = TokenEstimator.inputTokens(Self.request(ttl: nil))
        let prefix = TokenEstimator.tokens(Self.system)
        let worst = Self.request(ttl: nil).worstUsage(inputTokens: input, ttl: nil)
        #expect(worst == Usage(input: input - prefix, output: 20, cacheWrite: prefix))
        let hour = Self.request(ttl: nil).worstUsage(inputTokens: input, ttl: .oneHour)
        #expect(hour == Usage(input: input - prefix, output: 20, cacheWrite: prefix, cacheWriteHour: prefix))
        let perToken = try #require(sonnet.inputCostPerToken)
        let plain = sonnet.dollars(for: Usage(input: input, output: 20), lane: .live)
        let five = sonnet.worstDollars(for: worst, lane: .live)
        #expect(abs(five - plain - 0.25 * Double(prefix) * perToken) < 1e-12)
        #expect(abs(sonnet.worstDollars(for: hour, lane: .live) - plain - Double(prefix) * perToken) < 1e-12)
        var uncached = Self.request(ttl: nil)
        uncached.cacheSystemPrompt = false
        #expect(uncached.worstUsage(inputTokens: input, ttl: .oneHour) == Usage(input: input, output: 20))
        let flash = try #require(PriceTable.bundled.price(for: "gemini-2.5-flash"))
        let cheapWrites = try #require(flash.cacheCreationInputTokenCost)
        #expect(cheapWrites < (flash.inputCostPerToken ?? 0))
        #expect(
            flash.worstDollars(for: worst, lane: .live)
                == flash.dollars(for: Usage(input: input, output: 20), lane: .live))

        // The gate: room for the call at plain input prices, not with its prefix written.
        let stage = AdmitStage(gate: CallGateTests.gate(budget: .init(maxDollars: (plain + five) / 2)))
        func decide(_ request: CompletionRequest, ttl: PromptCacheTTL?) throws -> CallGate.Decision {
            try stage.decide(
                request, price: sonnet, spent: Spend(), inFlight: Spend(), lane: .live, cacheTTL: ttl,
                callsMade: 1, now: LoopFixtures.t0, conditions: { nil },
                latency: { _ throws(OffpeakError) in nil })
        }
        #expect(try decide(uncached, ttl: nil) == .go)
        guard case .stop(let stop, let budget) = try decide(Self.request(ttl: nil), ttl: nil) else {
            Issue.record("a call whose prefix write passes the budget started")
            return
        }
        #expect(budget == .maxDollars)
        #expect(
            stop.reason.hasPrefix("stopped by budget max_dollars: $0.00 spent, next call may cost up to $"))
    }

    @Test func aBatchTakesTheHourWhereItSendsAPrefixMoreThanOnceUnlessTheJobSaysOtherwise() throws {
        let shared = [Self.request(ttl: nil), Self.request(ttl: nil)]
        #expect(PromptCacheTTL.forBatch(shared, asked: nil) == .oneHour)
        #expect(PromptCacheTTL.forBatch([Self.request(ttl: nil)], asked: nil) == nil)
        #expect(PromptCacheTTL.forBatch(shared, asked: .fiveMinutes) == .fiveMinutes)
        #expect(PromptCacheTTL.forBatch([Self.request(ttl: nil)], asked: .oneHour) == .oneHour)
        var unmarked = Self.request(ttl: nil)
        unmarked.cacheSystemPrompt = false
        #expect(PromptCacheTTL.forBatch([unmarked, unmarked], asked: nil) == nil)

        let workspace = FileManager.default.temporaryDirectory
        let spec = try JobSpecParser.parse(
            yaml: "kind: prompt\nitems: [a]\ntemplate: \"{{item}}\"\nprompt_cache_ttl: 1h\n",
            path: "jobs/j.yaml",
            workspace: workspace)
        #expect(spec.promptCacheTTL == .oneHour)
        #expect(throws: OffpeakError.self) {
            try JobSpecParser.parse(
                yaml: "kind: prompt\nitems: [a]\ntemplate: \"{{item}}\"\nprompt_cache_ttl: 2h\n",
                path: "jobs/j.yaml",
                workspace: workspace)
        }
    }

    @Test func aScheduleThatRunsAgainWithinTheHourKeepsItsLivePrefixAnHour() throws {
        func ttl(_ schedule: String?, asked: String? = nil) throws -> PromptCacheTTL? {
            var yaml = "kind: prompt\nitems: [a]\ntemplate: \"{{item}}\"\ntimezone: UTC\n"
            if let schedule { yaml += "schedule: \"\(schedule)\"\n" }
            if let asked { yaml += "prompt_cache_ttl: \(asked)\n" }
            let spec = try JobSpecParser.parse(
                yaml: yaml, path: "jobs/j.yaml", workspace: FileManager.default.temporaryDirectory)
            return PromptCacheTTL.forLive(spec, now: Date(timeIntervalSince1970: 1_795_000_000))
        }
        #expect(try ttl("*/15 * * * *") == .oneHour)
        #expect(try ttl("0 * * * *") == .oneHour)
        #expect(try ttl("*/5 * * * *") == nil, "the 5-minute cache carries over by itself")
        #expect(try ttl("@daily") == nil)
        #expect(try ttl(nil) == nil)
        #expect(try ttl("*/15 * * * *", asked: "5m") == .fiveMinutes)

        // Through the binary: a live run of a job every 15 minutes writes its prefix for an hour, at
        // an hour's price, as the sim billed it.
        let sim = try SimProcess()
        let workspace = try Self.workspace(
            sim, count: 3, ttl: nil, lane: "live", extra: "schedule: \"*/15 * * * *\"")
        #expect(try workspace.offpeak(["run", "classify"]).status == 0)
        try Self.expectTheHourWrittenOnceAndReadTwice(sim, workspace)
    }

    /// A live pass whose calls start more than five minutes apart (each expected to take that long,
    /// at the concurrency the provider allows) keeps its prefix an hour; a measured fast model, or
    /// one whose calls overlap enough, keeps the 5-minute default; an unmeasured one too.
    @Test func aPassWhoseCallsStartMoreThanFiveMinutesApartKeepsItsPrefixAnHour() {
        #expect(PromptCacheTTL.forPass(callSeconds: nil, inFlight: 1) == nil)
        #expect(PromptCacheTTL.forPass(callSeconds: 60, inFlight: 1) == nil)
        #expect(PromptCacheTTL.forPass(callSeconds: 400, inFlight: 1) == .oneHour)
        #expect(PromptCacheTTL.forPass(callSeconds: 400, inFlight: 2) == nil)
        #expect(PromptCacheTTL.forPass(callSeconds: 2500, inFlight: 8) == .oneHour)
        #expect(PromptCacheTTL.forPass(callSeconds: 400, inFlight: 0) == .oneHour, "at least one")
    }

    /// Through the binary: the model measured at over an hour a call (seeded into the SQLite
    /// store's `model_latency`, as no test can wait that long), one call at a time: the pass writes
    /// its prefix for the hour once and reads it twice, billed so by the sim and booked so.
    @Test(.sqliteOnly) func aSlowModelsLivePassWritesItsPrefixForAnHour() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim, count: 3, ttl: nil, lane: "live")
        try workspace.write(
            "offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\nlimits: {sim: {in_flight: 1}}\n")
        #expect(try workspace.offpeak(["status"]).status == 0)
        let queue = try DatabaseQueue(
            path: workspace.root.appendingPathComponent("cache/offpeak.sqlite").path)
        try queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO model_latency (model, ms_per_call, ms_per_output_token, output_tokens, samples, updated_at)
                    VALUES ('claude-sonnet-4-5', 1000000, 20000, 20, 5, ?)
                    """, arguments: [Date()])
        }
        let run = try workspace.offpeak(["run", "classify"])
        #expect(run.status == 0, "\(run.stderr)")
        try Self.expectTheHourWrittenOnceAndReadTwice(sim, workspace)
    }

    /// Three live calls sharing the prefix: the sim billed one write of it for the hour and two
    /// reads, and the ledger holds those dollars.
    static func expectTheHourWrittenOnceAndReadTwice(_ sim: SimProcess, _ workspace: TemporaryWorkspace)
        throws
    {
        let billed = try #require(sim.stats()["billed"] as? [String: Int])
        let written = try #require(billed["cache_creation_input_tokens"])
        #expect(written >= 1024 && billed["cache_creation_1h_input_tokens"] == written)
        #expect(billed["cache_read_input_tokens"] == 2 * written)
        let price = try #require(PriceTable.bundled.cost(of: "claude-sonnet-4-5"))
        let dollars = price.dollars(
            for: Usage(
                input: billed["input_tokens"] ?? 0, output: billed["output_tokens"] ?? 0,
                cacheRead: billed["cache_read_input_tokens"] ?? 0, cacheWrite: written,
                cacheWriteHour: written),
            lane: .live)
        #expect(abs(try BatchLaneTests.ledgerDollars(try workspace.openStore()) - dollars) < 1e-12)
    }

    /// A workspace whose job sends `count` tickets, one call each, with the long system prompt, in
    /// `lane`, its prompt cache as `ttl` says (nil: auto), with `extra` spec lines.
    static func workspace(
        _ sim: SimProcess, count: Int, ttl: String?, lane: String = "batch", extra: String = ""
    ) throws -> TemporaryWorkspace {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\n")
        let items = (0..<count).map {
            "  - {id: t\($0), text: 'ticket \($0): my invoice \($0 % 7) is wrong'}"
        }
        try workspace.write(
            "jobs/classify.yaml",
            """
            kind: prompt
            system: "\(system)"
            template: "{{text}}"
            max_tokens: 20
            lane: \(lane)
            batching: off
            \(ttl.map { "prompt_cache_ttl: \($0)" } ?? "")
            \(extra)
            items:
            \(items.joined(separator: "\n"))

            """)
        return workspace
    }

    /// Ten calls sharing a prefix, answered by the provider over an hour (one every 400 s): with the
    /// 5-minute cache each finds it gone and writes it again; with the hour, the first writes it and
    /// the nine others read it. Each run's ledger is what its sim billed, and the hour costs less.
    @Test func theHourPaysInABatchAnsweredOverAnHourAndTheLedgerIsWhatTheSimBilled() throws {
        var dollars: [String: Double] = [:]
        for ttl in ["5m", "auto"] {
            let sim = try SimProcess(arguments: ["--batch-delay", "1", "--batch-spread", "3600"])
            let workspace = try Self.workspace(sim, count: 10, ttl: ttl == "auto" ? nil : ttl)
            // The estimate prices the lane's row with the cache the run takes, and says what each costs.
            let estimate = try workspace.offpeak(["estimate", "classify"]).stdout.split(separator: "\n")
            #expect(
                estimate.contains(
                    "batch lane's prompt cache: an hour (written at twice the input price) $0.006873; the 5-minute "
                        + "default $0.005320 if the provider answers the calls within five minutes of each other, "
                        + "$0.0267 if not (each writes it again)"), "\(estimate)")
            let row = ttl == "auto" ? "$0.006873" : "$0.005320"
            #expect(
                estimate.contains("batch *  10     0        80     12420       1380         100     \(row)"),
                "\(estimate)")
            #expect(try workspace.offpeak(["run", "classify"]).status == 75)
            BatchLaneTests.waitForTheBatchToEnd()
            let tick = try workspace.offpeak(["tick"])
            #expect(
                tick.stdout == "classify [resume]: job classify: 10 of 10 items answered (10 now)\n",
                "\(tick.stderr)")
            let billed = try #require(sim.stats()["billed_batch"] as? [String: Int])
            let prefix = (billed["cache_creation_input_tokens"] ?? 0) / (ttl == "auto" ? 1 : 10)
            #expect(prefix >= 1024)
            if ttl == "auto" {
                #expect(billed["cache_creation_1h_input_tokens"] == prefix)
                #expect(billed["cache_read_input_tokens"] == 9 * prefix)
            } else {
                #expect(billed["cache_creation_1h_input_tokens"] == 0)
                #expect(billed["cache_read_input_tokens"] == 0)
            }
            let model = "claude-sonnet-4-5"
            let simDollars = try BatchLaneTests.simBilledDollars(sim, model: model)
            let store = try workspace.openStore()
            #expect(abs(try BatchLaneTests.ledgerDollars(store) - simDollars) < 1e-12)
            dollars[ttl] = simDollars
        }
        let hour = try #require(dollars["auto"])
        let fiveMinutes = try #require(dollars["5m"])
        #expect(hour < fiveMinutes / 2, "\(dollars)")
    }
}
