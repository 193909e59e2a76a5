import ArgumentParser
import Foundation
import Offpeak

extension OffpeakCommand {
    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "init",
            abstract:
                "Start a workspace: a commented offpeak.yaml and an example job, then the next three steps.",
            discussion: """
                Writes offpeak.yaml for the provider and jobs/hello.yaml into the workspace folder \
                (the current one, or --workspace), and prints what to do next: the key to set (or the \
                server to start), the first run, and the crontab line that runs `offpeak tick`. It \
                never writes over a file: when either exists, or the folder cannot be written, it \
                exits 73 and writes nothing.
                """)

        @Option(
            name: .long,
            help: ArgumentHelp(
                "The provider the workspace calls: \(ProviderKind.names) (default: \(ProviderKind.standard.rawValue))."
            ))
        var provider: ProviderKind?

        @OptionGroup var common: CommonOptions

        func run() throws {
            let workspace = Workspace.resolve(common.workspace, environment: common.environment)
            let text = try Terminal.attempt {
                try WorkspaceInit(
                    workspace: workspace, provider: provider,
                    binary: Cron.Print.binaryPath(environment: common.environment)
                ).write()
            }
            print(text, terminator: "")
        }
    }
}
