import ArgumentParser
import Foundation
import Offpeak

extension OffpeakCommand {
    struct Cache: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Inspect or empty the cache of answers and research sources.",
            subcommands: [Stats.self, List.self, Show.self, Purge.self], defaultSubcommand: Stats.self)

        /// The workspace's cache, capped as `offpeak.yaml` says; read-only (when the store is) for
        /// every subcommand but `purge`.
        static func open(_ common: CommonOptions, forReading: Bool = true) throws -> ResponseCache {
            let context = try common.context()
            let store = try Terminal.attempt {
                try forReading ? context.openStoreForReading() : context.openStore()
            }
            return ResponseCache(store: store, maxBytes: context.config.cacheMaxBytes, logger: context.logger)
        }

        struct Stats: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Entries, size, hits and misses, and the dollars the cache saved.")

            @OptionGroup var common: CommonOptions
            @OptionGroup var output: OutputOptions

            /// `CacheStats` with the compression ratio, for `--json`.
            struct Report: Encodable {
                var entries, expiredEntries, rawBytes, storedBytes: Int
                var compressionRatio: Double?
                var hitsToday, missesToday, hitsTotal, missesTotal: Int
                var savedDollarsToday, savedDollarsTotal: Double
                var oldest, newest: Date?
            }

            func run() throws {
                let stats = try Terminal.attempt { try Cache.open(common).stats() }
                if output.json {
                    return try Terminal.printJSON(
                        Report(
                            entries: stats.entries, expiredEntries: stats.expiredEntries,
                            rawBytes: stats.rawBytes,
                            storedBytes: stats.storedBytes, compressionRatio: stats.compressionRatio,
                            hitsToday: stats.hitsToday, missesToday: stats.missesToday,
                            hitsTotal: stats.hitsTotal,
                            missesTotal: stats.missesTotal, savedDollarsToday: stats.savedDollarsToday,
                            savedDollarsTotal: stats.savedDollarsTotal, oldest: stats.oldest,
                            newest: stats.newest))
                }
                let ratio = stats.compressionRatio.map { String(format: " (%.2fx)", $0) } ?? ""
                print("entries: \(stats.entries) (\(stats.expiredEntries) expired)")
                print(
                    "size:    \(CacheFormat.bytes(stats.rawBytes)) raw, "
                        + "\(CacheFormat.bytes(stats.storedBytes)) compressed\(ratio)")
                print("hits:    \(stats.hitsToday) today, \(stats.hitsTotal) in all")
                print("misses:  \(stats.missesToday) today, \(stats.missesTotal) in all")
                print(
                    "saved:   $\(Money.format(stats.savedDollarsToday)) today, "
                        + "$\(Money.format(stats.savedDollarsTotal)) in all")
                print("oldest:  \(stats.oldest.map(CacheFormat.date) ?? "-")")
                print("newest:  \(stats.newest.map(CacheFormat.date) ?? "-")")
            }
        }

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "ls", abstract: "List cache entries, most recently used first.")

            @Option(help: "Only the entries this job stored.")
            var job: String?

            @Flag(help: "Only entries past their TTL.")
            var expired = false

            @Option(help: "How many entries to show.")
            var limit = 100

            @OptionGroup var common: CommonOptions
            @OptionGroup var output: OutputOptions

            func run() throws {
                let now = Date()
                let entries = try Terminal.attempt {
                    try Cache.open(common).entries(job: job, expiredOnly: expired, now: now, limit: limit)
                }
                if output.json { return try Terminal.printJSON(entries) }
                let table = TextTable(columns: ["KEY", "KIND", "JOB", "MODEL/URL", "SIZE", "HITS", "EXPIRES"])
                for entry in entries {
                    table.add([
                        String(entry.key.prefix(16)), entry.kind.rawValue, entry.job ?? "-",
                        entry.model ?? entry.url ?? "-", CacheFormat.bytes(entry.storedBytes),
                        String(entry.hits),
                        CacheFormat.relative(entry.expiresAt, now: now),
                    ])
                }
                print(table.render(), terminator: "")
            }
        }

        struct Show: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Print one entry and its payload.",
                discussion:
                    "KEY may be the first \(ResponseCache.minKeyPrefix) or more characters of one key.")

            @Argument(help: "The entry's key, or a unique prefix of it.")
            var key: String

            @OptionGroup var common: CommonOptions
            @OptionGroup var output: OutputOptions

            func run() throws {
                let now = Date()
                guard
                    let (summary, payload) = try Terminal.attempt({
                        try Cache.open(common).entry(key: key, now: now)
                    })
                else {
                    let hint =
                        key.count < ResponseCache.minKeyPrefix
                        ? " (give at least \(ResponseCache.minKeyPrefix) characters of it)" : ""
                    Terminal.printError("no cache entry with key \(key)\(hint)")
                    throw ExitCode(ExitStatus.dataError.rawValue)
                }
                if output.json {
                    return try Terminal.printJSON(Entry(entry: summary, payload: JSONText(text: payload)))
                }
                let table = TextTable(columns: ["", ""])
                for (name, value) in [
                    ("key", summary.key), ("kind", summary.kind.rawValue), ("job", summary.job ?? "-"),
                    ("provider", summary.provider ?? "-"), ("model", summary.model ?? "-"),
                    ("url", summary.url ?? "-"), ("created", CacheFormat.date(summary.createdAt)),
                    (
                        "expires",
                        "\(CacheFormat.date(summary.expiresAt)) (\(CacheFormat.relative(summary.expiresAt, now: now)))"
                    ),
                    ("last used", CacheFormat.date(summary.lastAccessAt)), ("hits", String(summary.hits)),
                    (
                        "size",
                        "\(CacheFormat.bytes(summary.rawBytes)) raw, \(CacheFormat.bytes(summary.storedBytes)) stored"
                    ),
                ] {
                    table.add([name + ":", value])
                }
                print(String(table.render().drop { $0 != "\n" }.dropFirst()), terminator: "")
                print(JSONText(text: payload).pretty)
            }

            struct Entry: Encodable {
                var entry: CacheEntrySummary
                var payload: JSONText
            }
        }

        struct Purge: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Remove entries: the expired ones, one job's, or all of them.")

            @Flag(help: "Remove the entries past their TTL.")
            var expired = false

            @Option(help: "Remove the entries this job stored.")
            var job: String?

            @Flag(help: "Remove every entry.")
            var all = false

            @OptionGroup var common: CommonOptions
            @OptionGroup var output: OutputOptions

            func validate() throws {
                let chosen = [expired, job != nil, all].filter { $0 }.count
                guard chosen == 1 else {
                    throw ValidationError("give exactly one of --expired, --job JOB, --all")
                }
            }

            var scope: PurgeScope {
                if let job { return .job(job) }
                return all ? .all : .expired
            }

            func run() throws {
                let removed = try Terminal.attempt { try Cache.open(common, forReading: false).purge(scope) }
                if output.json { return try Terminal.printJSON(["removed": removed]) }
                print("removed \(removed) \(removed == 1 ? "entry" : "entries")")
            }
        }
    }
}

/// A payload's JSON, embedded as JSON (not as a string) in `--json` output.
struct JSONText: Encodable {
    var text: String

    private var value: JSONValue? { try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) }

    /// Indented, for people; the text as it is when it does not parse.
    var pretty: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let value, let data = try? encoder.encode(value) else { return text }
        return String(decoding: data, as: UTF8.self)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let value { try container.encode(value) } else { try container.encode(text) }
    }
}

/// Any JSON value, read and written through `Codable`.
enum JSONValue: Codable {
    case null, bool(Bool), int(Int), double(Double), string(String)
    case array([JSONValue]), object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let int = try? container.decode(Int.self) {
            self = .int(int)
        } else if let double = try? container.decode(Double.self) {
            self = .double(double)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let bool): try container.encode(bool)
        case .int(let int): try container.encode(int)
        case .double(let double): try container.encode(double)
        case .string(let string): try container.encode(string)
        case .array(let array): try container.encode(array)
        case .object(let object): try container.encode(object)
        }
    }
}

/// How the cache commands print sizes and times.
enum CacheFormat {
    static func bytes(_ count: Int) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(count)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0
            ? "\(count) B" : String(format: value < 10 ? "%.1f" : "%.0f", value) + " " + units[unit]
    }

    /// Local time, to the minute.
    static func date(_ date: Date) -> String {
        let style = Date.ISO8601FormatStyle(dateTimeSeparator: .space, timeZone: .current)
        return String(date.formatted(style).prefix(16))
    }

    /// "in 23 h" or "2 h ago".
    static func relative(_ date: Date, now: Date) -> String {
        let seconds = Int(date.timeIntervalSince(now).rounded())
        let span = abs(seconds)
        let text =
            span < 60
            ? "\(span) s"
            : span < 3600 ? "\(span / 60) min" : span < 86_400 ? "\(span / 3600) h" : "\(span / 86_400) d"
        return seconds >= 0 ? "in \(text)" : "\(text) ago"
    }
}
