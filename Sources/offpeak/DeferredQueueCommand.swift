import ArgumentParser
import Foundation
import Offpeak

extension OffpeakCommand {
    struct Queue: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "queue",
            abstract:
                "The deferred queue: work waiting for its conditions, why, and since when; items waiting to retry; "
                + "spool entries not taken, and why."
        )

        @OptionGroup var sysfs: SysfsOptions
        @OptionGroup var common: CommonOptions
        @OptionGroup var output: OutputOptions

        /// The queue is shown even when the conditions cannot be read; the command then fails with
        /// their error (78 for a wrong root, 69 for a file that cannot be read).
        func run() throws {
            let context = try common.context()
            let conditions = context.gate(sysfsRoot: sysfs.sysfsRoot).read()
            let report = try Terminal.attempt {
                try context.reports().queue(conditions: conditions)
            }
            if output.json { try Terminal.printJSON(report) } else { print(report.text, terminator: "") }
            try Terminal.attempt { if let error = conditions.error { throw error } }
        }
    }
}
