import ArgumentParser
import Offpeak

extension OffpeakCommand {
    struct StoreCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "store",
            abstract:
                "Inspect or move the store: the workspace's SQLite file, or the PostgreSQL database it names.",
            subcommands: [Info.self, Copy.self], defaultSubcommand: Info.self)

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
                    The copy is whole or nothing; the source is left as it was. No tick may run here \
                    meanwhile. Then point the workspace at the copy (the command says how).
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
    }
}
