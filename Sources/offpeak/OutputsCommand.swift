import ArgumentParser
import Offpeak

extension OffpeakCommand {
    struct Outputs: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "outputs",
            abstract:
                "Write a job's output folder again from the store, as the host that finished the run wrote it.",
            discussion: """
                Any host on the store can: the files and index.json come out byte for byte the same. \
                The job's newest finished run by default. The folder is the one the job's spec here \
                names (output:), else the one its run was made with.
                """)

        @Argument(help: "The job's name.")
        var job: String

        @Option(
            name: .customLong("run"), help: "A finished run of the job, by id (offpeak status lists them).")
        var runID: String?

        @OptionGroup var common: CommonOptions
        @OptionGroup var output: OutputOptions

        func run() throws {
            let context = try common.context()
            let written = try Terminal.attempt { try context.rewriteOutputs(job: job, run: runID) }
            if output.json { try Terminal.printJSON(written) } else { print(written.text, terminator: "") }
        }
    }
}
