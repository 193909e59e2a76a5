import ArgumentParser
import Foundation
import Offpeak

extension OffpeakCommand {
    struct Conditions: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "conditions",
            abstract: "What offpeak sees of power and network right now, and why.")

        @OptionGroup var sysfs: SysfsOptions
        @OptionGroup var common: CommonOptions
        @OptionGroup var output: OutputOptions

        /// What could be read is shown; a root or a file that could not be read then fails the
        /// command with its error (78 for a wrong root, 69 for a file that cannot be read).
        func run() throws {
            let context = try common.context()
            let conditions = context.gate(sysfsRoot: sysfs.sysfsRoot).read()
            if output.json {
                try Terminal.printJSON(conditions)
            } else {
                print(conditions.text, terminator: "")
            }
            try Terminal.attempt { if let error = conditions.error { throw error } }
        }
    }
}
