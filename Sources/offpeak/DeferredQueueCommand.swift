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

        func run() throws {
            let context = try common.context()
            let report = try Terminal.attempt {
                try QueueReport.make(
                    store: try context.openStoreForReading(),
                    conditions: context.gate(sysfsRoot: sysfs.sysfsRoot).read())
            }
            if output.json { try Terminal.printJSON(report) } else { print(report.text, terminator: "") }
        }
    }
}
