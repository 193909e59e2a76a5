import ArgumentParser
import Foundation
import Offpeak

extension OffpeakCommand {
    struct Audit: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "audit",
            abstract:
                "How a job's batched answers compared with the same items asked alone, and what that decided.",
            discussion: """
                Agreement by batch size and by position in the prompt, with its 95% interval; the batch
                size each model may use now; the items whose batched answer disagreed (they keep their
                single answer); and what the audit calls cost beside the job. Reads the store only.
                """)

        @Argument(help: "The job's name or spec file.")
        var job: String

        @OptionGroup var common: CommonOptions
        @OptionGroup var output: OutputOptions

        func run() throws {
            let context = try common.context()
            let report = try Terminal.attempt { try context.audit(try context.loadJob(job)) }
            if output.json { try Terminal.printJSON(report) } else { print(report.text, terminator: "") }
        }
    }
}
