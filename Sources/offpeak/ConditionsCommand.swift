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

        func run() throws {
            let context = try common.context()
            let conditions = context.gate(sysfsRoot: sysfs.sysfsRoot).read()
            if output.json {
                try Terminal.printJSON(conditions)
            } else {
                print(conditions.text, terminator: "")
            }
        }
    }
}
