import Foundation
import OffpeakTestSupport
import Testing

/// `offpeak cron` and `offpeak cron next`, through the built binary.
@Suite(.ownThreads) struct CronCommandTests {
    static func offpeak(_ arguments: [String], environment: [String: String?] = [:]) throws -> CommandResult {
        try CommandResult.run(BuiltBinaries.offpeak, arguments, environment: environment)
    }

    @Test func nextPrintsFireTimesAcrossTheSpringDSTChange() throws {
        let result = try Self.offpeak([
            "cron", "next", "30 2 * * *", "--from", "2026-03-28", "--timezone", "Europe/Berlin", "--count",
            "3",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout
                == "2026-03-28T02:30:00+01:00\n2026-03-29T03:00:00+02:00\n2026-03-30T02:30:00+02:00\n")
    }

    @Test func nextFiresARepeatedHourOnceAndDefaultsToFiveTimes() throws {
        let result = try Self.offpeak(
            ["cron", "next", "@hourly", "--from", "2026-10-25T01:30:00+02:00"],
            environment: ["TZ": "Europe/Berlin"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout.split(separator: "\n") == [
                "2026-10-25T02:00:00+02:00", "2026-10-25T03:00:00+01:00", "2026-10-25T04:00:00+01:00",
                "2026-10-25T05:00:00+01:00", "2026-10-25T06:00:00+01:00",
            ])
    }

    @Test func aTicksWindowIsADurationUpToADay() throws {
        let workspace = try TemporaryWorkspace()
        let tick = try workspace.offpeak(["tick", "--window", "25h"])
        #expect(tick.status == 64)
        #expect(
            tick.stderr.hasPrefix(
                "Error: --window: expected a duration from 1s to 24h, like 60s, 5m or 1h, got '25h'\n"))
        let cron = try workspace.offpeak(["cron", "--window", "3000000d"])
        #expect(cron.status == 64)
        #expect(
            cron.stderr
                == "offpeak: --window: expected a duration from 1s to 24h, like 240s or 4m, got '3000000d'\n")
        #expect(try workspace.offpeak(["cron", "--window", "24h"]).status == 0)
        // The clock tests move (`tick --now`, hidden) is read as `cron next --from` is.
        let clock = try workspace.offpeak(["tick", "--now", "tomorrow"])
        #expect(clock.status == 64)
        #expect(
            clock.stderr
                == "offpeak: --now: expected an ISO-8601 time like 2026-03-28, 2026-03-28T09:00 or "
                + "2026-03-28T09:00:00+01:00, got 'tomorrow'\n")
        #expect(clock.stdout.isEmpty)
    }

    @Test func badExpressionsTimesAndZonesAreUsageErrors() throws {
        let cases: [([String], String)] = [
            (["cron", "next", "0 25 * * *"], "hour: expected 0-23, got '25'"),
            (["cron", "next", "0 0 30 2 *", "--timezone", "UTC"], "never fires"),
            (["cron", "next", "@daily", "--from", "tomorrow"], "--from: expected an ISO-8601 time"),
            (["cron", "next", "@daily", "--timezone", "Mars/Olympus"], "--timezone: expected a zone name"),
            (["cron", "--every", "0"], "--every: expected 1-60 minutes"),
            (["cron", "--window", "soon"], "--window: expected a duration"),
        ]
        for (arguments, message) in cases {
            let result = try Self.offpeak(arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        }
    }

    @Test func cronPrintsACrontabLineAndASystemdTimer() throws {
        let workspace = try TemporaryWorkspace()
        let root = workspace.root.standardizedFileURL.path
        let result = try Self.offpeak(
            ["cron", "--workspace", root, "--every", "10"],
            environment: ["ANTHROPIC_API_KEY": "sk-ant-secret"])
        #expect(result.status == 0, "\(result.stderr)")
        let text = result.stdout
        let crontab = try #require(text.split(separator: "\n").first { $0.hasPrefix("*/10 * * * * ") })
        #expect(crontab.contains(" tick --workspace \(root) --window 240s"))
        #expect(crontab.contains("\(BuiltBinaries.offpeak.path) tick"))
        #expect(crontab.contains(">> \(root)/cache/tick.log 2>&1"))
        #expect(crontab.contains("OFFPEAK_WORKSPACE=\(root)"))
        let unit = "offpeak-" + workspace.root.lastPathComponent
        for line in [
            "# --- Or: systemd (user). Save as ~/.config/systemd/user/\(unit).service",
            "# --- and as ~/.config/systemd/user/\(unit).timer", "Type=oneshot", "SuccessExitStatus=75",
            "ExecStart=\(BuiltBinaries.offpeak.path) tick --workspace \(root) --window 240s",
            "EnvironmentFile=-%h/.config/offpeak/env", "OnCalendar=*:0/10", "Persistent=true",
            "Unit=\(unit).service",
            "systemctl --user daemon-reload && systemctl --user enable --now \(unit).timer",
        ] {
            #expect(text.contains("\n\(line)\n"), "missing: \(line)")
        }
        #expect(!text.contains("sk-ant-secret"))
        #expect(
            text.contains(
                "a NAME=... line each (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, DEEPSEEK_API_KEY, GROQ_API_KEY or "
                    + "MISTRAL_API_KEY);"
            ))
    }
}
