import Foundation
import OffpeakTestSupport
import Testing

/// SIGHUP: the SSH session or terminal `offpeak run` was started from closes (issue 10, item 13).
@Suite(.ownThreads) struct HangUpTests {
    /// Starts `offpeak run docs` on a terminal of its own (a pty, its session's controlling
    /// terminal), closes the terminal while a call is in flight, as a dropped SSH session does,
    /// and prints the exit status. The kernel hangs the terminal up and sends SIGHUP; from then on
    /// every write to it fails, the progress line's too.
    static let session = """
        import os, pty, sys, time
        pid, terminal = pty.fork()
        if pid == 0:
            os.execv(sys.argv[1], sys.argv[1:-1])
        deadline = time.time() + float(sys.argv[-1])
        while time.time() < deadline:
            time.sleep(0.05)
            try:
                os.read(terminal, 65536)
            except OSError:
                break
        os.close(terminal)
        print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
        """

    /// The call in flight finishes, the run checkpoints as `interrupted` and exits 75 (it was
    /// killed and left `running` until its lease ran out); the next tick finishes it.
    @Test func aClosedTerminalStopsTheRunLikeSIGTERM() throws {
        let sim = try SimProcess(arguments: ["--latency-ms", "1500"])
        let workspace = try TemporaryWorkspace.docs(on: sim, documents: 4)
        // One call at a time: the terminal closes (after the next progress write) while the run
        // still has work; with calls in flight all four answers are in by then.
        try workspace.write(
            "offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\nlimits: {sim: {in_flight: 1}}\n")
        let hangUp = try CommandResult.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "python3", "-c", Self.session, BuiltBinaries.offpeak.path, "run", "docs", "--workspace",
                workspace.root.path, "2",
            ], environment: try workspace.storeEnvironment(), timeout: 60)
        #expect(hangUp.stdout == "75\n", "\(hangUp.stdout) \(hangUp.stderr)")

        let status = try workspace.offpeak(["status", "--json"])
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
        let run = try #require((report["runs"] as? [[String: Any]])?.first)
        #expect(run["state"] as? String == "interrupted")
        #expect(run["reason"] as? String == "stopped by SIGHUP")
        let done = try #require(run["items_done"] as? Int)
        #expect(done >= 1 && done < 4, "\(done) items done when the terminal closed")

        let tick = try workspace.offpeak(["tick"])
        #expect(tick.status == 0, "\(tick.stdout) \(tick.stderr)")
        #expect(workspace.snapshot("out/docs").count == 4 + 1, "four answers and the index")
    }
}
