import ArgumentParser
import Offpeak

extension OffpeakCommand {
    struct StoreCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "store",
            abstract:
                "Inspect or move the store: the workspace's SQLite file, or the PostgreSQL database it names.",
            subcommands: [Info.self, Copy.self, Prune.self], defaultSubcommand: Info.self)

        struct Info: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "info",
                abstract:
                    "Which store, its schema version and size; for PostgreSQL the server and the other offpeak connections.",
                discussion: """
                    The store is offpeak.yaml's `store:` (sqlite, the default, or a postgresql:// URL); \
                    the OFFPEAK_STORE environment variable overrides it. The password is never printed.
                    """)

            @OptionGroup var common: CommonOptions
            @OptionGroup var output: OutputOptions

            func run() throws {
                let context = try common.context()
                let report = StoreInfoReport(try Terminal.attempt { try context.storeInfo() })
                if output.json { try Terminal.printJSON(report) } else { print(report.text, terminator: "") }
            }
        }

        struct Copy: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "copy",
                abstract:
                    "Copy the workspace's store, every table, into an empty PostgreSQL database or the SQLite file.",
                discussion: """
                    Copies the store in use (offpeak.yaml's `store:`, or OFFPEAK_STORE) into TARGET: a \
                    postgresql:// URL whose database holds none of offpeak's tables' rows, or `sqlite`, the \
                    workspace's cache/offpeak.sqlite, which must not exist yet. Everything is copied: the \
                    queue, runs, requests, results, ledger, reservations, batches, schedules and cache. \
                    The copy is whole or nothing. Writers wait for it, and the source is then marked \
                    moved: a run, submit or tick still pointed at it writes nothing there and says where \
                    the store went. No tick may run here meanwhile. Then point the workspace at the copy \
                    (the command says how).
                    """)

            @OptionGroup var common: CommonOptions
            @OptionGroup var output: OutputOptions

            @Option(
                name: .customLong("to"),
                help: ArgumentHelp("Where to copy the store.", valueName: "sqlite|URL"))
            var target: String

            func run() throws {
                let context = try common.context()
                let report = StoreCopyReport(try Terminal.attempt { try context.copyStore(to: target) })
                if output.json { try Terminal.printJSON(report) } else { print(report.text, terminator: "") }
            }
        }

        struct Prune: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "prune",
                abstract:
                    "Remove the requests and results of runs finished longer ago than retention keeps them.",
                discussion: """
                    offpeak.yaml's `retention: {runs: 90d, ledger: 180d}` (the defaults; `retention: off` \
                    keeps everything) says how long a finished run's requests, results and checkpoint are \
                    kept, and how long its calls keep a ledger row each before they are rolled up by day. \
                    Every tick does a few runs; this does all of them now, and shrinks a SQLite file back. \
                    Nothing pending, deferred or in a provider batch is ever pruned, outputs already \
                    written stay, and no `costs` total changes.
                    """)

            @OptionGroup var common: CommonOptions
            @OptionGroup var output: OutputOptions

            @Flag(help: "Say what would be removed, and remove nothing.")
            var dryRun = false

            /// The moment the horizon is counted back from.
            @OptionGroup var now: NowOption

            func run() throws {
                let clock = try now.date()
                let context = try common.context()
                let outcome = try Terminal.attempt {
                    try context.pruneStore(dryRun: dryRun, now: clock)
                }
                if output.json {
                    try Terminal.printJSON(outcome)
                } else {
                    print(outcome.text, terminator: "")
                }
            }
        }
    }
}
