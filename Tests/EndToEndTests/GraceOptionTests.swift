import Foundation
import OffpeakTestSupport
import Testing

/// `--grace` (issue 21, item 4): a grace of 1e300 seconds passed validation, and the signal handler
/// that printed it as whole seconds trapped (SIGILL in libswiftCore) when SIGTERM came.
@Suite(.ownThreads, .serialized) struct GraceOptionTests {
    @Test func aGraceIsSecondsFromZeroToAnHour() throws {
        let workspace = try TemporaryWorkspace()
        for grace in ["1e300", "inf", "nan", "-1", "3601"] {
            for command in [["tick"], ["run", "docs"]] {
                let result = try workspace.offpeak(command + ["--grace=\(grace)"])
                #expect(result.status == 64, "\(command) --grace \(grace): \(result.stderr)")
                #expect(
                    result.stderr.contains("--grace: expected seconds from 0 to 3600"),
                    "\(command) --grace \(grace): \(result.stderr)")
            }
        }
    }

    /// The longest grace: SIGTERM is heard (and said) without a trap, a second SIGTERM aborts the
    /// calls in flight at once, and the run exits 75, resumable.
    @Test func theLongestGraceStopsCleanly() throws {
        let sim = try SimProcess(arguments: ["--latency-ms", "60000"])
        let workspace = try TemporaryWorkspace.docs(on: sim, documents: 4)
        let process = try TickTests.start(["run", "docs", "--grace", "3600"], in: workspace)
        try InFlightStopTests.waitForCallsInFlight(sim, 1)
        process.signal(SIGTERM)
        Thread.sleep(forTimeInterval: 0.5)
        process.signal(SIGTERM)
        let finished = try #require(process.wait(timeout: 30))
        #expect(finished.status == 75, "\(finished.stderr)")
        #expect(finished.stderr.contains("SIGTERM: no new calls; waiting up to 3600 s"), "\(finished.stderr)")
    }
}
