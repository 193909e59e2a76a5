import ArgumentParser
import Foundation
import Offpeak

extension OffpeakCommand {
    struct Cancel: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "cancel",
            abstract:
                "Cancel a run: its provider batches are asked to cancel and its requests not yet answered are dropped."
        )

        @Argument(help: "The run's id (`offpeak status` lists them).")
        var runID: String

        @OptionGroup var common: CommonOptions
        @OptionGroup var output: OutputOptions

        func run() throws {
            let context = try common.context()
            let canceled = try Terminal.attempt { try context.cancel(runID: runID) }
            if output.json { try Terminal.printJSON(canceled) } else { print(canceled.text, terminator: "") }
        }
    }
}
