import ArgumentParser
import Foundation
import Offpeak

extension OffpeakCommand {
    struct Cron: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "cron",
            abstract: "Run offpeak on a timer: crontab and systemd lines, and when a schedule fires.",
            subcommands: [Print.self, Next.self],
            defaultSubcommand: Print.self)
    }
}

extension OffpeakCommand.Cron {
    struct Print: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "print",
            abstract:
                "Print a crontab line and a systemd user timer that run `offpeak tick` for the workspace.")

        @Option(name: .long, help: "Minutes between ticks (1-60).")
        var every = 5

        @Option(name: .long, help: "How long each tick may work, passed to `tick --window`.")
        var window = "240s"

        @OptionGroup var common: CommonOptions

        func run() throws {
            let workspace = Workspace.resolve(common.workspace, environment: common.environment)
            let installation = try Terminal.attempt {
                try TickInstallation(
                    binary: Self.binaryPath(environment: common.environment), workspace: workspace,
                    everyMinutes: every, window: window)
            }
            print(installation.instructions, terminator: "")
        }

        /// This binary's absolute path: `argv[0]` made absolute (keeping a symlink the user installed),
        /// found on `PATH` when it is a bare name, else `/proc/self/exe`.
        static func binaryPath(environment: [String: String]) -> String {
            let invoked = CommandLine.arguments.first ?? "offpeak"
            let files = FileManager.default
            if invoked.contains("/") {
                let url = URL(
                    fileURLWithPath: invoked, relativeTo: URL(fileURLWithPath: files.currentDirectoryPath))
                return url.standardizedFileURL.path
            }
            for folder in (environment["PATH"] ?? "").split(separator: ":") where folder.hasPrefix("/") {
                let candidate = URL(fileURLWithPath: String(folder)).appendingPathComponent(invoked).path
                if files.isExecutableFile(atPath: candidate) { return candidate }
            }
            return (try? files.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? invoked
        }
    }

    struct Next: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "next",
            abstract: "Print when a cron expression fires next, one ISO-8601 time a line.",
            discussion:
                "Fire times are wall-clock times in the zone; see Schedules in docs/conditions-queue-tick.md for DST."
        )

        @Argument(help: "A 5-field cron expression or a macro like @daily, quoted.")
        var expression: String

        @Option(name: .long, help: "Start after this time: 2026-03-28, 2026-03-28T09:00 or with an offset.")
        var from: String?

        @Option(name: .long, help: "How many fire times to print.")
        var count = 5

        @Option(name: .long, help: "The IANA time zone, e.g. Europe/Berlin (default: the local zone).")
        var timezone: String?

        func run() throws {
            let (cron, zone, start) = try Terminal.attempt { try parsed() }
            let formatter = Self.formatter(pattern: "yyyy-MM-dd'T'HH:mm:ssxxx", zone: zone)
            let times = cron.nextTimes(after: start, count: count, in: zone)
            guard !times.isEmpty else {
                Terminal.printError("'\(cron.text)' never fires (no such date within 8 years)")
                throw ExitCode(ExitStatus.usage.rawValue)
            }
            for time in times { print(formatter.string(from: time)) }
            if times.count < count {
                Terminal.printError("'\(cron.text)' fires no more within 8 years")
            }
        }

        /// The expression, zone and start time; any of them wrong is a usage error.
        func parsed() throws(OffpeakError) -> (CronExpression, TimeZone, Date) {
            guard (1...10_000).contains(count) else {
                throw OffpeakError(.usage, "--count: expected 1-10000, got \(count)")
            }
            let cron: CronExpression
            do {
                cron = try CronExpression(expression)
            } catch {
                throw OffpeakError(.usage, "\(error)")
            }
            let zone = try Self.zone(timezone)
            guard let from else { return (cron, zone, Date()) }
            return (cron, zone, try Self.date(from, in: zone, option: "--from"))
        }

        static func zone(_ name: String?) throws(OffpeakError) -> TimeZone {
            guard let name else { return TimeZone.current }
            guard let zone = TimeZone(identifier: name) else {
                throw OffpeakError(
                    .usage, "--timezone: expected a zone name like Europe/Berlin or UTC, got '\(name)'")
            }
            return zone
        }

        /// An ISO-8601 date or date-time, with an offset or read as wall-clock time in `zone`;
        /// `option` names it in the error.
        static func date(_ text: String, in zone: TimeZone, option: String) throws(OffpeakError) -> Date {
            let patterns = [
                "yyyy-MM-dd'T'HH:mm:ssXXXXX", "yyyy-MM-dd'T'HH:mmXXXXX", "yyyy-MM-dd'T'HH:mm:ss",
                "yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd",
            ]
            for pattern in patterns {
                if let date = formatter(pattern: pattern, zone: zone).date(from: text) { return date }
            }
            throw OffpeakError(
                .usage,
                "\(option): expected an ISO-8601 time like 2026-03-28, 2026-03-28T09:00 or "
                    + "2026-03-28T09:00:00+01:00, got '\(text)'")
        }

        static func formatter(pattern: String, zone: TimeZone) -> DateFormatter {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.calendar = Calendar(identifier: .gregorian)
            formatter.timeZone = zone
            formatter.dateFormat = pattern
            formatter.isLenient = false
            return formatter
        }
    }
}
