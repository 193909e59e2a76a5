import ArgumentParser
import Offpeak

extension OffpeakCommand {
    struct StoreCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "store",
            abstract: "Inspect the store: the workspace's SQLite file, or the PostgreSQL database it names.",
            subcommands: [Info.self], defaultSubcommand: Info.self)

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
    }
}
