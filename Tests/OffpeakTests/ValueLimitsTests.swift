import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Every duration, size and budget in a job spec or `offpeak.yaml` has an upper bound, checked when
/// the file is read: a value past it (`deadline: 3000000d`) once validated, was written into the
/// run row as a date past the year 9999, and from then on every command exited 74.
@Suite(.ownThreads) struct ValueLimitsTests {
    /// One bounded field: where it is written, the largest value it takes and the first it refuses.
    struct Field: Sendable, CustomTestStringConvertible {
        /// `cache_ttl`, or `budget.max_calls` for a field inside a mapping.
        var path: String
        /// In `offpeak.yaml` rather than a job spec.
        var inConfig: Bool
        var largest: String
        /// What `largest` reads as: seconds, bytes, tokens or dollars.
        var largestValue: Double
        var tooLarge: String
        /// What the message says is expected.
        var expected: String

        var testDescription: String { path }

        static let base = "kind: prompt\ntemplate: x\nitems: [a]\n"

        /// The file with `value` for this field, and where the value starts in it.
        func file(_ value: String) -> (yaml: String, location: String) {
            let parts = path.split(separator: ".")
            let prefix = inConfig ? "" : Self.base
            let line = prefix.split(separator: "\n").count + parts.count
            switch parts.count {
            case 1: return (prefix + "\(path): \(value)\n", "\(line):\(path.count + 3)")
            case 2:
                return (prefix + "\(parts[0]):\n  \(parts[1]): \(value)\n", "\(line):\(parts[1].count + 5)")
            default:
                let yaml = "\(parts[0]):\n  \(parts[1]):\n    \(parts[2]): \(value)\n"
                return (prefix + yaml, "\(line):\(parts[2].count + 7)")
            }
        }

        /// Parses the file with `value`: the field's value as a number, or the error.
        func parse(_ value: String) throws(OffpeakError) -> Double? {
            let yaml = file(value).yaml
            if inConfig {
                let config = try WorkspaceConfigParser.parse(yaml: yaml, path: "offpeak.yaml")
                switch path {
                case "http.connect_timeout": return config.connectTimeout
                case "http.timeout": return config.requestTimeout
                case "http.max_retries": return Double(config.maxRetries)
                case "limits.anthropic.in_flight": return config.limits[.anthropic]?.inFlight.map(Double.init)
                case "limits.openai.requests_per_minute":
                    return config.limits[.openai]?.requestsPerMinute.map(Double.init)
                case "limits.sim.tokens_per_minute":
                    return config.limits[.sim]?.tokensPerMinute.map(Double.init)
                default: return Double(config.cacheMaxBytes)
                }
            }
            let spec = try JobSpecParser.parse(
                yaml: yaml, path: "jobs/test.yaml", workspace: FileManager.default.temporaryDirectory)
            switch path {
            case "cache_ttl": return spec.cacheTTL
            case "deadline": return spec.deadline
            case "window": return spec.window
            case "checkpoint_max_age": return spec.checkpointMaxAge
            case "budget.max_input_tokens": return spec.budget.maxInputTokens.map(Double.init)
            case "budget.max_output_tokens": return spec.budget.maxOutputTokens.map(Double.init)
            case "budget.max_calls": return spec.budget.maxCalls.map(Double.init)
            case "max_tokens": return Double(spec.maxTokens)
            case "max_attempts": return Double(spec.maxAttempts)
            case "batching.max_items": return Double(spec.batching.maxItems)
            case "batching.max_item_tokens": return Double(spec.batching.maxItemTokens)
            case "chunking.max_tokens": return Double(spec.chunking.maxTokens)
            default: return spec.budget.maxDollars
            }
        }
    }

    static let duration = "like 90s, 10m, 24h, 7d or 1h30m"
    static let tokens = "a whole number from 1 to 1_000_000_000_000"

    static let fields: [Field] = [
        Field(
            path: "cache_ttl", inConfig: false, largest: "3650d", largestValue: 315_360_000,
            tooLarge: "3650d1s",
            expected: "a duration from 0s to 3650d (10 years), \(duration)"),
        Field(
            path: "deadline", inConfig: false, largest: "3650d", largestValue: 315_360_000, tooLarge: "3651d",
            expected: "a duration from 1s to 3650d (10 years), \(duration)"),
        Field(
            path: "checkpoint_max_age", inConfig: false, largest: "315360000", largestValue: 315_360_000,
            tooLarge: "315360001", expected: "a duration from 1s to 3650d (10 years), \(duration)"),
        Field(
            path: "window", inConfig: false, largest: "24h", largestValue: 86_400, tooLarge: "1d1s",
            expected: "a duration from 1s to 24h, \(duration)"),
        Field(
            path: "budget.max_input_tokens", inConfig: false, largest: "1_000_000_000_000",
            largestValue: 1e12, tooLarge: "1000000000001", expected: tokens),
        Field(
            path: "budget.max_output_tokens", inConfig: false, largest: "1000000000000", largestValue: 1e12,
            tooLarge: "1_000_000_000_001", expected: tokens),
        Field(
            path: "budget.max_calls", inConfig: false, largest: "1000000000", largestValue: 1e9,
            tooLarge: "1000000001", expected: "a whole number from 1 to 1_000_000_000"),
        Field(
            path: "budget.max_dollars", inConfig: false, largest: "1000000", largestValue: 1e6,
            tooLarge: "1000000.01", expected: "a number more than 0 and at most 1_000_000"),
        // Bounded before the year-9999 fix; listed so every size and count is held to its bound.
        Field(
            path: "max_tokens", inConfig: false, largest: "200000", largestValue: 200_000, tooLarge: "200001",
            expected: "a whole number from 1 to 200_000"),
        Field(
            path: "max_attempts", inConfig: false, largest: "100", largestValue: 100, tooLarge: "101",
            expected: "a whole number from 1 to 100"),
        Field(
            path: "batching.max_items", inConfig: false, largest: "100", largestValue: 100, tooLarge: "101",
            expected: "a whole number from 1 to 100"),
        Field(
            path: "batching.max_item_tokens", inConfig: false, largest: "1_000_000", largestValue: 1e6,
            tooLarge: "1000001", expected: "a whole number from 1 to 1_000_000"),
        Field(
            path: "chunking.max_tokens", inConfig: false, largest: "1000000", largestValue: 1e6,
            tooLarge: "1000001", expected: "a whole number from 100 to 1_000_000"),
        Field(
            path: "http.max_retries", inConfig: true, largest: "100", largestValue: 100, tooLarge: "101",
            expected: "a whole number from 0 to 100"),
        Field(
            path: "http.connect_timeout", inConfig: true, largest: "1h", largestValue: 3_600,
            tooLarge: "3601",
            expected: "a duration from 1s to 1h, \(duration)"),
        Field(
            path: "http.timeout", inConfig: true, largest: "60m", largestValue: 3_600, tooLarge: "1h1s",
            expected: "a duration from 1s to 1h, \(duration)"),
        Field(
            path: "limits.anthropic.in_flight", inConfig: true, largest: "1000", largestValue: 1_000,
            tooLarge: "1001", expected: "a whole number from 1 to 1000"),
        Field(
            path: "limits.openai.requests_per_minute", inConfig: true, largest: "1_000_000",
            largestValue: 1e6, tooLarge: "1000001", expected: "a whole number from 1 to 1_000_000"),
        Field(
            path: "limits.sim.tokens_per_minute", inConfig: true, largest: "1000000000000",
            largestValue: 1e12,
            tooLarge: "1_000_000_000_001", expected: tokens),
        Field(
            path: "cache.max_bytes", inConfig: true, largest: "1TiB", largestValue: 1_099_511_627_776,
            tooLarge: "1099511627777", expected: "a size from 1 byte to 1TiB, like 268435456, 256MB or 1GiB"),
    ]

    @Test(arguments: fields)
    func theLargestValueIsTakenAndTheNextOneRefusedWithTheBound(field: Field) throws {
        #expect(try field.parse(field.largest) == field.largestValue)
        let file = field.inConfig ? "offpeak.yaml" : "jobs/test.yaml"
        let status: Offpeak.ExitStatus = field.inConfig ? .configuration : .dataError
        for value in [field.tooLarge, "99999999999999999999"] {
            let error = #expect(throws: OffpeakError.self) { try field.parse(value) }
            let location = field.file(value).location
            #expect(error?.status == status)
            #expect(
                error?.description
                    == "\(file):\(location): \(field.path): expected \(field.expected), got '\(value)'")
        }
    }

    /// Values a parser could overflow on while reading them: refused with the bound, never wrapped
    /// round to a small number or taken as the largest one.
    @Test(arguments: [
        ("deadline", "106751991167301d"), ("deadline", "9223372036854775807s"),
        ("cache_ttl", "1d9223372036854775807s"),
        ("window", "9223372036854775808"), ("cache.max_bytes", "8589934592GiB"),
        ("cache.max_bytes", "9223372036854775807"), ("cache.max_bytes", "9223372036854775808 B"),
    ])
    func overflowingValuesAreRefused(path: String, value: String) throws {
        let field = try #require(Self.fields.first { $0.path == path })
        #expect(throws: OffpeakError.self) { try field.parse(value) }
    }

    @Test func parsersReportOverflowAsNotAValue() {
        #expect(DurationParser.seconds("106751991167300d") == TimeInterval(106_751_991_167_300 * 86_400))
        #expect(DurationParser.seconds("106751991167301d") == nil)
        #expect(DurationParser.seconds("1d9223372036854775807s") == nil)
        #expect(DurationParser.seconds("99999999999999999999") == nil)
        #expect(ByteSizeParser.bytes("8589934591GiB") == 8_589_934_591 << 30)
        #expect(ByteSizeParser.bytes("8589934592GiB") == nil)
        #expect(ByteSizeParser.bytes("2tb") == 2 << 40)
        #expect(ByteSizeParser.bytes("99999999999999999999") == nil)
        #expect(DurationParser.text(ValueLimits.longDuration) == "3650d (10 years)")
        #expect(DurationParser.text(86_400) == "24h")
        #expect(DurationParser.text(90) == "90s")
        #expect(ByteSizeParser.text(1 << 40) == "1TiB")
        #expect(ByteSizeParser.text(1000) == "1000 bytes")
    }

    /// The largest durations are dates the store holds: a run with all of them set is recorded,
    /// its answers are cached and found again, and `status` reads it back.
    @Test func theLargestDurationsAreStoredAndReadBack() throws {
        let sim = try SimProcess()
        let workspace = try TemporaryWorkspace.docs(
            on: sim, documents: 2,
            extra: "cache_ttl: 3650d\ndeadline: 3650d\ncheckpoint_max_age: 3650d\nwindow: 24h\nlane: live")
        let context = try WorkspaceContext(
            workspace: Workspace(root: workspace.root), environment: try workspace.environment(),
            logger: Logger(label: "test"))
        let first = try context.run(try context.loadJob("docs"))
        #expect(first.status == .ok, "\(first.message)")
        #expect(first.spend.calls == 2)
        let second = try context.run(try context.loadJob("docs"))
        #expect(second.spend.calls == 0, "answered from the cache")
        #expect(second.run.itemsCached == 2)
        let status = try workspace.offpeak(["status", "--json"])
        #expect(status.status == 0, "\(status.stderr)")
    }
}
