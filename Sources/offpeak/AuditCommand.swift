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
                Per model, the agreement by batch size (all audits, and those at the prompts' tail, where a
                size is judged) and by position in the prompt, each with its 95% interval, and how each size
                stands against the job's target (audit.agree): holds up, unproven (and how many agreeing
                audits would prove it), below target, or not used; the batch size each model may use now;
                the decisions; the items whose batched answer disagreed (they keep their single answer);
                and what the audit calls cost beside the job. Reads the store only.
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
