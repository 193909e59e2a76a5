import Foundation
import OffpeakTestSupport
import Testing

/// `offpeak status RUN`: one run as a person reads it (the dashboard's run page shows the same
/// report): its line of `status`, its requests by state with the first few of each, and where its
/// outputs are; a run the store does not hold is a data error that says where to look.
@Suite(.ownThreads) struct RunStatusTests {
    static func minute(_ iso: Any?) -> String {
        guard let text = iso as? String, let date = ISO8601DateFormatter().date(from: text) else {
            return "?"
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.string(from: date)
    }

    @Test func aRunsRequestsByStateAndItsOutputs() throws {
        let sim = try SimProcess()
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\n")
        try workspace.write(
            "jobs/tides.yaml",
            """
            kind: prompt
            template: "Describe: {{item}}"
            output: out/coast
            items:
              - {id: spring, item: spring tides}
              - {id: neap, item: neap tides}
              - {id: king, item: king tides}
            """)
        let environment: [String: String?] = ["TZ": "UTC"]
        let run = try workspace.offpeak(["run", "tides"], environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        let id = try workspace.runID(of: "tides", environment: environment)
        let json = try TickTests.json(
            try workspace.offpeak(["status", id, "--json"], environment: environment).stdout)
        let line = try #require(json["run"] as? [String: Any])
        let cost = run.stdout.split(separator: "\n").first { $0.hasPrefix("cost: ") } ?? ""

        let shown = try workspace.offpeak(["status", id], environment: environment)
        #expect(shown.status == 0)
        #expect(
            shown.stdout == """
                run \(id) of job tides: completed
                model claude-sonnet-4-5 (sim, balanced tier); created \(Self.minute(line["created_at"])), \
                started \(Self.minute(json["started_at"])), finished \(Self.minute(json["finished_at"]))
                items: 3/3
                \(cost)

                requests by state:
                STATE  COUNT  FIRST
                done   3      spring, neap, king

                outputs: out/coast/ (out/coast/index.json names each item's file)

                """)
        #expect(
            json["outputs"] as? [String: String] == ["folder": "out/coast/", "index": "out/coast/index.json"])
        let states = try #require(json["states"] as? [[String: Any]])
        #expect(
            states.count == 1 && states[0]["state"] as? String == "done" && states[0]["count"] as? Int == 3)

        let missing = try workspace.offpeak(["status", "tides-nope"], environment: environment)
        #expect(missing.status == 65)
        #expect(missing.stdout == "")
        #expect(
            missing.stderr
                == "offpeak: run tides-nope: no such run in the store; `offpeak status` lists the runs\n")
    }
}
