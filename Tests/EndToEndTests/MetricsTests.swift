import Foundation
import OffpeakTestSupport
import Testing

/// The Prometheus metrics file `tick` and `run` write (issue 14, item 4), through the built
/// binaries against `offpeak-sim`, checked with `promtool` from Debian's prometheus package.
@Suite(.ownThreads, .serialized) struct MetricsTests {
    /// `promtool`, which CI installs (`.ci/run`); a test needing it fails, saying how to get it.
    static func promtool() throws -> URL {
        let path = "/usr/bin/promtool"
        try #require(
            FileManager.default.isExecutableFile(atPath: path),
            "promtool is missing: install Debian's prometheus package (scripts/install-deps.sh prometheus)")
        return URL(fileURLWithPath: path)
    }

    /// A workspace on `sim` with the queue job `inbox` and three questions in its spool folder,
    /// writing its metrics to `metrics/offpeak.prom` (`folder` made when asked).
    static func workspace(_ sim: SimProcess, metrics: String = "metrics/offpeak.prom", folder: Bool = true)
        throws -> TemporaryWorkspace
    {
        let workspace = try TemporaryWorkspace()
        try workspace.write(
            "offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\nmetrics: {textfile: \(metrics)}\n")
        try workspace.write(
            "jobs/inbox.yaml",
            "kind: prompt\nqueue: true\nsystem: Answer in one sentence.\ntemplate: \"{{item}}\"\n"
                + "max_tokens: 60\nbatching: off\n")
        for index in 1...3 {
            try workspace.write("spool/inbox/q-\(index).txt", "What is \(index) plus one? It is small.")
        }
        if folder {
            try FileManager.default.createDirectory(
                at: workspace.root.appendingPathComponent("metrics"), withIntermediateDirectories: true)
        }
        return workspace
    }

    /// The samples of a metrics text, by series (`name{labels}`), comments left out.
    static func samples(_ text: String) -> [String: String] {
        var samples: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " ") else { continue }
            samples[String(line[..<space])] = String(line[line.index(after: space)...])
        }
        return samples
    }

    @Test func aTickWritesMetricsThatPromtoolAccepts() throws {
        let promtool = try Self.promtool()
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim)
        let tick = try workspace.offpeak(["tick"])
        #expect(tick.status == 0, "\(tick.stdout)\(tick.stderr)")
        #expect(tick.stderr == "")
        let file = workspace.root.appendingPathComponent("metrics/offpeak.prom")
        let text = try #require(workspace.read("metrics/offpeak.prom"))
        let check = try CommandResult.run(promtool, ["check", "metrics"], stdin: Data(text.utf8))
        #expect(check.status == 0)
        #expect(check.stdout == "")
        #expect(check.stderr == "")

        let calls = try #require(try sim.stats()["calls"] as? Int)
        let samples = Self.samples(text)
        #expect(samples["offpeak_calls_total{lane=\"live\"}"] == "\(calls)")
        #expect(samples["offpeak_calls_total{lane=\"batch\"}"] == "0")
        #expect(samples["offpeak_items{state=\"done\"}"] == "3")
        #expect(samples["offpeak_items{state=\"open\"}"] == "0")
        #expect(samples["offpeak_runs{state=\"completed\"}"] == "1")
        #expect(samples["offpeak_deferred_jobs{reason=\"other\"}"] == "0")
        #expect(samples["offpeak_batches_in_flight"] == "0")
        #expect(samples["offpeak_last_tick_exit_status"] == "0")
        #expect(samples["offpeak_last_tick_timestamp_seconds"] != nil)
        #expect(samples["offpeak_last_tick_duration_seconds"] != nil)
        // Owner-writable, readable by node_exporter's user; nothing left beside it.
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o644)
        let names = try FileManager.default.contentsOfDirectory(
            atPath: workspace.root.appendingPathComponent("metrics").path)
        #expect(names == ["offpeak.prom"])

        // A `run` rewrites it from the store: the workspace's totals, and the last tick as recorded.
        try workspace.write("spool/inbox/q-4.txt", "What is 4 plus one? It is small.")
        let run = try workspace.offpeak(["run", "inbox"])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let after = Self.samples(try #require(workspace.read("metrics/offpeak.prom")))
        #expect(after["offpeak_items{state=\"done\"}"] == "4")
        #expect(
            after["offpeak_calls_total{lane=\"live\"}"] == "\(try #require(try sim.stats()["calls"] as? Int))"
        )
        for name in ["timestamp_seconds", "duration_seconds", "exit_status"] {
            #expect(after["offpeak_last_tick_\(name)"] == samples["offpeak_last_tick_\(name)"])
        }
    }

    @Test func aMetricsFileThatCannotBeWrittenWarnsAndTheTickStands() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim, metrics: "missing/offpeak.prom", folder: false)
        let tick = try workspace.offpeak(["tick"])
        #expect(tick.status == 0)
        #expect(tick.stdout.hasPrefix("inbox [spool]: "))
        #expect(
            tick.stderr
                == "offpeak: warning: cannot write the metrics file missing/offpeak.prom (No such file or directory)\n"
        )
        #expect(TickTests.answers(workspace, job: "inbox").count == 3)
        #expect(
            !FileManager.default.fileExists(atPath: workspace.root.appendingPathComponent("missing").path))
    }

    @Test func aMetricsPathNotEndingInPromIsAConfigurationError() throws {
        let sim = try SimProcess()
        let workspace = try Self.workspace(sim, metrics: "metrics/offpeak.txt")
        let tick = try workspace.offpeak(["tick"])
        #expect(tick.status == 78)
        #expect(tick.stdout == "")
        #expect(
            tick.stderr
                == "offpeak: offpeak.yaml:3:21: metrics.textfile: expected a file path ending in .prom "
                + "(node_exporter's textfile collector reads only *.prom files), got 'metrics/offpeak.txt'\n")
        #expect(try sim.stats()["calls"] as? Int == 0)
    }
}
