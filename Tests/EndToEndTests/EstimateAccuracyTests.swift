import Foundation
import OffpeakTestSupport
import Testing

/// Issue 14, item 2: on the sim's workloads (bench/workloads.py's W-classify, W-summarize and
/// W-inbox, at a small scale) the estimate is within 10 % of what the run then costs, as its
/// ledger books it. Each on a fresh workspace, so the answer length is the estimate's first guess
/// (half of max_tokens), not a measured one.
@Suite(.ownThreads) struct EstimateAccuracyTests {
    /// A workload as bench/sides.py writes its workspace: the files, the requests to submit per
    /// job, the sim's flags and the jobs to run.
    struct Workload: Decodable {
        var files: [String: String]
        var submit: [String: String]
        var simArgs: [String]
        var jobs: [String]

        enum CodingKeys: String, CodingKey {
            case files, submit, jobs
            case simArgs = "sim_args"
        }
    }

    static let writer = """
        import json, pathlib, sys, tempfile
        sys.dont_write_bytecode = True
        sys.path.insert(0, sys.argv[1] + "/bench")
        import sides, workloads
        w = {"W-classify": workloads.classify, "W-summarize": workloads.summarize,
             "W-inbox": workloads.inbox}[sys.argv[2]](float(sys.argv[3]))
        d = pathlib.Path(tempfile.mkdtemp()) / "ws"
        sides.make_workspace(w, d, "SIMURL")
        files = {str(p.relative_to(d)): p.read_text() for p in d.rglob("*") if p.is_file()}
        submit = {j.name: "".join(json.dumps({"id": i.id, "vars": {"item": i.text}}) + "\\n"
                                  for i in w.items if i.job == j.name) for j in w.jobs if j.queue}
        print(json.dumps({"files": files, "submit": submit, "sim_args": w.sim_args,
                          "jobs": [j.name for j in w.jobs]}))
        """

    static func workload(_ name: String, scale: Double) throws -> Workload {
        let made = try CommandResult.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", "-c", writer, BuiltBinaries.packageRoot.path, name, "\(scale)"])
        #expect(made.status == 0, "\(made.stderr)")
        return try JSONDecoder().decode(Workload.self, from: Data(made.stdout.utf8))
    }

    /// Writes the workload, submits its requests, estimates every job, runs them; the estimate's
    /// dollars and the ledger's.
    static func estimateThenRun(_ name: String, scale: Double) throws -> (estimated: Double, actual: Double) {
        let workload = try workload(name, scale: scale)
        let sim = try SimProcess(arguments: workload.simArgs)
        let workspace = try TemporaryWorkspace()
        for (path, text) in workload.files {
            try workspace.write(path, text.replacingOccurrences(of: "SIMURL", with: sim.url))
        }
        for (job, lines) in workload.submit.sorted(by: { $0.key < $1.key }) {
            let submit = try workspace.offpeak(["submit", "--job", job], stdin: lines)
            #expect(submit.status == 0, "\(submit.stderr)")
        }
        var estimated = 0.0
        for job in workload.jobs {
            let estimate = try workspace.offpeak(["estimate", job, "--json"])
            #expect(estimate.status == 0, "\(estimate.stderr)")
            let report = try #require(
                try JSONSerialization.jsonObject(with: Data(estimate.stdout.utf8)) as? [String: Any])
            estimated += try #require(report["dollars"] as? Double)
        }
        #expect(try sim.stats()["calls"] as? Int == 0)
        for job in workload.jobs {
            let run = try workspace.offpeak(["run", job])
            #expect(run.status == 0, "\(run.stderr)")
        }
        let costs = try workspace.offpeak(["costs", "--json"])
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(costs.stdout.utf8)) as? [String: Any])
        let total = try #require(report["total"] as? [String: Any])
        return (estimated, try #require(total["dollars"] as? Double))
    }

    @Test(arguments: [("W-classify", 0.05), ("W-summarize", 0.05), ("W-inbox", 0.05)])
    func theEstimateIsWithinTenPercentOfWhatTheRunCosts(workload: String, scale: Double) throws {
        let (estimated, actual) = try Self.estimateThenRun(workload, scale: scale)
        #expect(actual > 0)
        #expect(
            abs(estimated / actual - 1) <= 0.10,
            "\(workload): estimated $\(estimated), the run cost $\(actual)")
    }
}
