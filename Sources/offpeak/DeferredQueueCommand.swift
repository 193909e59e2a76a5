import ArgumentParser
import Foundation
import Offpeak

extension OffpeakCommand {
    struct Queue: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "The deferred queue: work waiting for its conditions, why, and since when; items waiting to retry."
        )

        @Option(
            name: .customLong("sysfs-root"),
            help: "The sysfs folder conditions are read from (default: $OFFPEAK_SYSFS_ROOT, else /sys).")
        var sysfsRoot: String?

        @OptionGroup var common: CommonOptions
        @OptionGroup var output: OutputOptions

        func run() throws {
            let context = try common.context()
            let report = try Terminal.attempt {
                try QueueReport.make(
                    store: try context.openStore(), conditions: context.gate(sysfsRoot: sysfsRoot).read())
            }
            if output.json { try Terminal.printJSON(report) } else { print(report.text, terminator: "") }
        }
    }
}
