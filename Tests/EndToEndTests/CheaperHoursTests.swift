import Foundation
import OffpeakTestSupport
import Testing

/// Issue 48 through the built binaries, in a user's zone with DST (Europe/Berlin) while DeepSeek's
/// price page states its hours and weekdays in UTC, which has none: on the night Berlin's clocks go
/// forward (31 March 2030), a summary asked at Sunday 23:30 UTC (Monday 01:30 in Berlin) runs at
/// once, at the weekend's off-peak prices; one asked at Monday 06:05 UTC (08:05 in Berlin, in
/// peak hours) waits for 10:00 UTC, the same UTC hour as before the change; a tick then runs it.
/// `costs --by day` counts both on Berlin's Monday, in the off-peak window, and `--by tag` under
/// the tag the summaries were asked with.
@Suite(.ownThreads) struct CheaperHoursTests {
    @Test func aSummaryWaitsForTheOffPeakHoursInUTCWhileBerlinChangesItsClocks() throws {
        let sim = try SimProcess()
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: deepseek\nbase_url: \(sim.url)/deepseek\n")
        try workspace.write("a.md", "The tide turns twice a day.\n")
        try workspace.write("b.md", "Storms come from the west.\n")
        let environment: [String: String?] = [
            "DEEPSEEK_API_KEY": "sk-test", "TZ": "Europe/Berlin",
            "OFFPEAK_SYSFS_ROOT": BuiltBinaries.packageRoot.appendingPathComponent(
                "Tests/Fixtures/sysfs/ac-wifi"
            ).path,
        ]
        func offpeak(_ arguments: [String]) throws -> CommandResult {
            try workspace.offpeak(arguments, environment: environment)
        }
        let summarize = ["summarize", "--deadline", "12h", "--wait-for-cheaper-prices", "--tag", "team:docs"]

        let night = try offpeak(summarize + ["a.md", "--now", "2030-03-31T23:30:00Z"])
        #expect(night.status == 0, "\(night.stderr)")
        #expect(
            night.stdout == """
                job summarize: 1 of 1 item answered (1 now)
                outputs: out/summarize/
                cost: $0.000011 for 1 call, 47 input and 7 output tokens (naive $0.000011, saved $0.00)

                """)

        let peak = try offpeak(summarize + ["b.md", "--now", "2030-04-01T06:05:00Z"])
        #expect(peak.status == 75, "\(peak.stderr)")
        #expect(
            peak.stdout + peak.stderr == """
                job summarize deferred: waiting for off-peak prices at 10:00 UTC (saves about 50 %, deadline 18:05 UTC); \
                `offpeak tick` runs it when they begin, `offpeak run --force` runs it now at today's prices

                """)

        let tick = try offpeak(["tick", "--now", "2030-04-01T10:00:30Z"])
        #expect(tick.status == 0, "\(tick.stderr)")
        // The tick's clock is years ahead of the machine's: it prunes the first summary's run and
        // rolls its ledger rows up, which keep their window and tags (the costs below).
        #expect(
            tick.stdout == """
                summarize [resume]: job summarize: 1 of 1 item answered (1 now)
                pruned 1 finished run (1 request, 1 result)
                rolled up the ledger rows of 1 run by day: 1 row into 1

                """)

        let byDay = try offpeak(["costs", "--by", "day"])
        #expect(
            byDay.stdout == """
                DAY         CALLS  INPUT  CACHE-READ  OUTPUT  COST       NAIVE      SAVED
                2030-04-01  2      94     0           14      $0.000022  $0.000022  $0.00
                total       2      94     0           14      $0.000022  $0.000022  $0.00

                by price window (models whose prices change with the clock):
                DAY         WINDOW    CALLS  COST
                2030-04-01  off-peak  2      $0.000022

                saved by waiting for cheaper prices: $0.000011 on 1 call (against the prices their runs waited through)

                """)
        let byTag = try offpeak(["costs", "--by", "tag"])
        #expect(
            byTag.stdout == """
                TAG        CALLS  INPUT  CACHE-READ  OUTPUT  COST       NAIVE      SAVED
                team:docs  2      94     0           14      $0.000022  $0.000022  $0.00
                total      2      94     0           14      $0.000022  $0.000022  $0.00
                (a call made with several tags is in each of their lines)

                by price window (models whose prices change with the clock):
                WINDOW    CALLS  COST
                off-peak  2      $0.000022

                saved by waiting for cheaper prices: $0.000011 on 1 call (against the prices their runs waited through)

                """)
    }
}
