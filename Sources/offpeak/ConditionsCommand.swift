import ArgumentParser
import Foundation
import Offpeak

extension OffpeakCommand {
    struct Conditions: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "What offpeak sees of power and network right now, and why.")

        @Option(
            name: .customLong("sysfs-root"),
            help: "The sysfs folder to read (default: $OFFPEAK_SYSFS_ROOT, else /sys).")
        var sysfsRoot: String?

        @OptionGroup var common: CommonOptions
        @OptionGroup var output: OutputOptions

        func run() throws {
            let context = try common.context()
            let root =
                sysfsRoot.map { URL(fileURLWithPath: $0, isDirectory: true) }
                ?? MachineConditions.defaultRoot(environment: common.environment)
            let conditions = MachineConditions.read(
                sysfsRoot: root, metered: context.config.meteredInterfaces,
                unmetered: context.config.unmeteredInterfaces)
            if output.json {
                try Terminal.printJSON(conditions)
            } else {
                print(conditions.text, terminator: "")
            }
        }
    }
}
