import ArgumentParser
import Foundation
import Offpeak

extension OffpeakCommand {
    struct Cache: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "cache",
            abstract: "Inspect or empty the cache of answers and research sources.",
            subcommands: [Stats.self, List.self, Show.self, Purge.self], defaultSubcommand: Stats.self)

        /// The workspace's cache: read-only (when the store is) for every subcommand but `purge`.
        static func open(_ common: CommonOptions, forReading: Bool = true) throws -> ResponseCache {
            let context = try common.context()
            return try Terminal.attempt { try context.openCache(forReading: forReading) }
        }

        struct Stats: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "stats",
                abstract: "Entries, size, hits and misses, and the dollars the cache saved.")

            @OptionGroup var common: CommonOptions
            @OptionGroup var output: OutputOptions

            func run() throws {
                let report = CacheStatsReport(try Terminal.attempt { try Cache.open(common).stats() })
                if output.json { try Terminal.printJSON(report) } else { print(report.text, terminator: "") }
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
                let report = CacheListReport(entries: entries, now: now)
                if output.json { try Terminal.printJSON(report) } else { print(report.text, terminator: "") }
            }
        }

        struct Show: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "show",
                abstract: "Print one entry and its payload.",
                discussion:
                    "KEY may be the first \(ResponseCache.minKeyPrefix) or more characters of one key.")

            @Argument(help: "The entry's key, or a unique prefix of it.")
            var key: String

            @OptionGroup var common: CommonOptions
            @OptionGroup var output: OutputOptions

            func run() throws {
                let report = try Terminal.attempt {
                    try CacheEntryReport.find(key, in: try Cache.open(common))
                }
                if output.json { try Terminal.printJSON(report) } else { print(report.text, terminator: "") }
            }
        }

        struct Purge: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "purge",
                abstract: "Remove entries: the expired ones, one job's, or all of them.")

            @Flag(
                help:
                    "Remove the entries past their TTL, but for the answers and sources `reuse: unchanged` jobs keep."
            )
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
                let purged = try Terminal.attempt { try Cache.open(common, forReading: false).purge(scope) }
                if output.json { return try Terminal.printJSON(purged) }
                print(purged.text, terminator: "")
            }
        }
    }
}
