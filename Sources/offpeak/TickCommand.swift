import ArgumentParser
import Foundation
import Offpeak

extension OffpeakCommand {
    struct Tick: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "tick",
            abstract:
                "Do what is due: resume unfinished runs, run due schedules and spooled work, purge the cache.",
            discussion: """
                Meant for cron or a systemd timer (`offpeak cron` prints both). A second tick while one runs \
                exits 0 at once. Exits 75 when work remains for a later tick (the window ended, a signal, \
                conditions, retries).
                """)

        @Option(
            help:
                "How long this tick may work, e.g. 60s or 5m; calls that would not fit wait for the next tick."
        )
        var window: String?

        /// The clock a tick reads schedules, leases aside, by: for tests that move it (issue 23:
        /// hosts ticking slot after slot) and for replaying what a tick at another time would do.
        @OptionGroup var now: NowOption

        @OptionGroup var common: CommonOptions
        @OptionGroup var conditions: ConditionOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            if let window, DurationParser.seconds(window).map({ $0 > 0 && $0 <= ValueLimits.window }) != true
            {
                throw ValidationError(
                    "--window: expected a duration from 1s to 24h, like 60s, 5m or 1h, got '\(window)'")
            }
        }

        func run() throws {
            let clock = try now.date()
            let context = try common.context()
            let options = Offpeak.Tick.Options(
                window: window.flatMap(DurationParser.seconds),
                gate: context.gate(sysfsRoot: conditions.sysfs.sysfsRoot),
                stop: Signals.stopOnTermination(grace: conditions.grace),
                now: clock, version: OffpeakVersion.current)
            let report = try Terminal.attempt { try Offpeak.Tick(context: context).run(options) }
            if let warning = report.metricsWarning { Terminal.printError("warning: \(warning)") }
            if output.json { try Terminal.printJSON(report) } else { print(report.text, terminator: "") }
            if report.status != 0 { throw ExitCode(report.status) }
        }
    }
}
