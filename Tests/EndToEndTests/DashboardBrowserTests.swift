import Foundation
import OffpeakTestSupport
import Testing

/// Issue 49's must-show: `offpeak dashboard` looked at in a real browser (Debian's headless
/// chromium, driven through chromium-driver by `scripts/browse.py`), on the suite's store. The page
/// shows what the command line shows: spend today, spend by job, model and tag, a point a day on the
/// chart (30 and 90 days) with each day's spend, the deferred queue and the runs; an item named
/// `<script>alert(1)</script>` is text on its run's page and opens no alert; a name that resolves to
/// the dashboard (DNS rebinding) and, with `--listen`, a request without the token are refused;
/// nothing the browser asked changed the store; the browser's console stays empty (the page's own
/// Content-Security-Policy blocks nothing it needs).
@Suite(.ownThreads) struct DashboardBrowserTests {
    static let browse = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("scripts/browse.py")

    /// What the browser saw at each visit (`scripts/browse.py`).
    struct Seen: Decodable {
        let url: String
        let title: String
        let alert: String?
        let body: String
        let texts: [String: [String]]
        let contents: [String: [String]]
        let styles: [String: String?]
        let console: [String]
    }

    struct Visit: Encodable {
        var url: String
        var texts: [String: String] = [:]
        var contents: [String: String] = [:]
        var styles: [String: [String]] = [:]
    }

    struct Plan: Encodable {
        var resolve: [String: String] = [:]
        var visits: [Visit]
    }

    static func browse(_ plan: Plan) throws -> [Seen] {
        try PythonPackages.require(
            ["selenium"], packages: ["selenium"], for: "drive chromium in the dashboard's tests")
        let result = try PythonPackages.python([browse.path], stdin: try JSONEncoder().encode(plan))
        #expect(result.status == 0, "\(result.stderr)")
        return try JSONDecoder().decode([Seen].self, from: Data(result.stdout.utf8))
    }

    /// Noon of the local day `days` before today, as `--now` takes it.
    static func noon(daysAgo days: Int) -> String {
        let calendar = Calendar.current
        let day = calendar.date(byAdding: .day, value: -days, to: calendar.startOfDay(for: Date())) ?? Date()
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: day.addingTimeInterval(12 * 3600))
    }

    /// The cells of a text table's rows (`offpeak costs`: cells apart by two spaces or more), in
    /// order.
    static func rows(_ table: String) -> [[String]] {
        table.split(separator: "\n").dropFirst().filter { $0.contains("  ") }.map { line in
            line.components(separatedBy: "  ").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
                !$0.isEmpty
            }
        }
    }

    /// A workspace with spend on three days (ten and three days ago, today), tags, an item whose
    /// id is markup, and a job deferred for power.
    static func workspace(_ sim: SimProcess, sysfs: SwitchableSysfs) throws -> (
        TemporaryWorkspace, [String: String?]
    ) {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\n")
        try workspace.write(
            "jobs/tides.yaml",
            """
            kind: prompt
            template: "Describe: {{item}}"
            tags: [coast]
            items:
              - {id: "<script>alert(1)</script>", item: spring tides}
              - {id: neap, item: neap tides}
            """)
        try workspace.write(
            "jobs/reefs.yaml",
            "kind: prompt\ntemplate: \"Name: {{item}}\"\ntags: [coast, deep]\nitems: [corals, kelp, sponges]\n"
        )
        try workspace.write(
            "jobs/charts.yaml", "kind: prompt\ntemplate: \"Chart: {{item}}\"\nitems: [north, south]\n")
        try workspace.write(
            "jobs/storm.yaml",
            "kind: prompt\ntemplate: \"Warn: {{item}}\"\nconstraints: {power: ac}\nitems: [gale]\n")
        let environment: [String: String?] = ["OFFPEAK_SYSFS_ROOT": sysfs.root.path]
        for (job, days) in [("tides", 10), ("reefs", 3), ("charts", 0)] {
            let now = days == 0 ? [] : ["--now", noon(daysAgo: days)]
            let run = try workspace.offpeak(["run", job] + now, environment: environment)
            #expect(run.status == 0, "\(job): \(run.stdout) \(run.stderr)")
        }
        try sysfs.switchTo("battery-wifi")
        let storm = try workspace.offpeak(["run", "storm"], environment: environment)
        #expect(storm.status == 75, "deferred: \(storm.stdout) \(storm.stderr)")
        return (workspace, environment)
    }

    /// What the command line reports, to compare before and after the browser looked.
    static func reports(_ workspace: TemporaryWorkspace, _ environment: [String: String?]) throws -> [String]
    {
        try [
            ["status", "--json"], ["queue", "--json"], ["costs", "--by", "day", "--json"],
            ["costs", "--by", "tag", "--json"], ["cache", "stats", "--json"], ["hosts", "--json"],
        ].map { try workspace.offpeak($0, environment: environment).stdout }
    }

    @Test func theBrowserSeesTheStoresNumbersAndNoMarkupFromIt() throws {
        let sim = try SimProcess()
        let sysfs = try SwitchableSysfs("ac-wifi")
        let (workspace, environment) = try Self.workspace(sim, sysfs: sysfs)
        let before = try Self.reports(workspace, environment)
        let tidesRun = try workspace.runID(of: "tides", environment: environment)
        let byJob = Self.rows(try workspace.offpeak(["costs"], environment: environment).stdout)
        let byModel = Self.rows(
            try workspace.offpeak(["costs", "--by", "model"], environment: environment).stdout)
        let byDay = Dictionary(
            Self.rows(try workspace.offpeak(["costs", "--by", "day"], environment: environment).stdout).map {
                ($0[0], $0)
            },
            uniquingKeysWith: { first, _ in first })
        let today =
            try workspace.offpeak(["status"], environment: environment).stdout
            .split(separator: "\n").first ?? ""  // spend today: $X in N calls (naive $Y)

        var serverEnvironment = try workspace.storeEnvironment()
        serverEnvironment["OFFPEAK_SYSFS_ROOT"] = sysfs.root.path
        serverEnvironment["OFFPEAK_NMCLI"] = ""
        let server = try DashboardTests.Server(workspace: workspace.root, environment: serverEnvironment)
        let rows = "tbody tr"
        let seen = try Self.browse(
            Plan(
                resolve: ["rebound.test": "127.0.0.1"],
                visits: [
                    Visit(
                        url: server.url + "/",
                        texts: [
                            "spent": "#spent-today", "conditions": "#conditions", "runs": "#runs \(rows)",
                            "deferred": "#deferred \(rows)", "byJob": "#by-job \(rows)",
                            "byModel": "#by-model \(rows)",
                            "byTag": "#by-tag \(rows)", "note": "#chart-note",
                            "cache": "#cache-stats \(rows)",
                        ],
                        contents: ["points": "svg.chart circle title"],
                        styles: ["table": ["table", "border-collapse"]]),
                    Visit(url: server.url + "/?days=90", contents: ["points": "svg.chart circle title"]),
                    Visit(
                        url: server.url + "/runs/" + tidesRun,
                        texts: ["items": "#states .item", "run": "#run-id", "outputs": "#output-folder"]),
                    Visit(url: "http://rebound.test:\(server.port)/"),
                ]))
        try #require(seen.count == 4)
        let (page, quarter, run, rebound) = (seen[0], seen[1], seen[2], seen[3])
        for visit in seen.prefix(3) {
            #expect(visit.alert == nil, "no script ran: \(visit.url)")
            #expect(visit.console == [], "nothing blocked, nothing failed: \(visit.url)")
        }
        #expect(page.styles["table"] == "collapse", "its own style sheet is allowed")

        // Now: today's spend and the conditions, as `status` and `queue` say them.
        let spentToday = today.split(separator: " ")  // spend today: $X in N calls ...
        #expect(page.texts["spent"] == ["\(spentToday[2]) for \(spentToday[4]) calls"], "\(today)")
        #expect(page.texts["conditions"] == ["on battery (54 %); online, unmetered (wlan0)"], "\(page.body)")
        #expect(page.texts["deferred"]?.count == 1)
        #expect(page.texts["deferred"]?.first?.hasPrefix("storm ") == true)
        #expect(
            page.texts["deferred"]?.first?.hasSuffix(" 1 waiting for external power") == true, "\(page.texts)"
        )
        #expect(page.texts["runs"]?.count == 4, "four runs: \(page.texts["runs"] ?? [])")

        // Money: each table's rows are `costs`' rows, its job, calls, cost, naive and saved.
        func expected(_ table: [[String]]) -> [String] {
            table.map { cells in
                cells.count > 7
                    ? [cells[0], cells[1], cells[5], cells[6], cells[7]].joined(separator: " ") : "?"
            }
        }
        #expect(page.texts["byJob"] == expected(byJob), "\(byJob)")
        #expect(byJob.map(\.[0]) == ["reefs", "tides", "charts", "total"])
        #expect(page.texts["byModel"] == expected(byModel), "\(byModel)")
        let byTag = Self.rows(
            try workspace.offpeak(["costs", "--by", "tag"], environment: environment).stdout)
        #expect(page.texts["byTag"] == expected(byTag), "\(byTag)")
        #expect(byTag.map(\.[0]) == ["coast", "deep", "(no tag)", "total"])

        // The chart: a point a day, today the last; each day's title is what `costs --by day` says.
        let points = try #require(page.contents["points"])
        #expect(points.count == 30 && quarter.contents["points"]?.count == 90)
        let calendar = Calendar.current
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd"
        formatter.locale = Locale(identifier: "en_US_POSIX")
        for (index, title) in points.enumerated() {
            let date =
                calendar.date(byAdding: .day, value: index - 29, to: calendar.startOfDay(for: Date()))
                ?? Date()
            let day = formatter.string(from: date)
            let spent = byDay[day].map { "\($0[5]) (naive \($0[6]))" } ?? "$0.00 (naive $0.00)"
            #expect(title == "\(day): \(spent)", "point \(index)")
        }
        #expect(run.texts["items"] == ["<script>alert(1)</script>", "neap"], "the id is text, not markup")
        #expect(run.texts["run"] == [tidesRun])
        #expect(run.texts["outputs"] == ["out/tides/"])
        #expect(byDay.count == 4, "three days and the total: \(byDay)")

        #expect(rebound.body == "offpeak dashboard answers only \(server.url)/", "\(rebound.body)")
        #expect(try Self.reports(workspace, environment) == before, "the store is as it was")
    }

    /// `--listen`: on every address, with a token. The browser without it is refused; with it in
    /// the address it printed, the page opens and keeps it (a cookie), so its links open too; a
    /// script carries it as `Authorization: Bearer`.
    @Test func listeningBeyondLoopbackAsksForTheToken() throws {
        let sim = try SimProcess()
        let sysfs = try SwitchableSysfs("ac-wifi")
        let (workspace, environment) = try Self.workspace(sim, sysfs: sysfs)
        let before = try Self.reports(workspace, environment)
        let reefsRun = try workspace.runID(of: "reefs", environment: environment)

        var serverEnvironment = try workspace.storeEnvironment()
        serverEnvironment["OFFPEAK_SYSFS_ROOT"] = sysfs.root.path
        let server = try DashboardTests.Server(
            workspace: workspace.root, environment: serverEnvironment, arguments: ["--listen", "0.0.0.0"])
        #expect(server.url == "http://0.0.0.0:\(server.port)")
        #expect(
            server.query.hasPrefix("?token=") && server.query.count == "?token=".count + 64, "\(server.query)"
        )
        let token = String(server.query.dropFirst("?token=".count))
        let base = "http://127.0.0.1:\(server.port)"
        let seen = try Self.browse(
            Plan(visits: [
                Visit(url: base + "/"),
                Visit(url: base + "/" + server.query, texts: ["spent": "#spent-today"]),
                Visit(url: base + "/runs/" + reefsRun, texts: ["run": "#run-id"]),
            ]))
        try #require(seen.count == 3)
        #expect(seen[0].body == "offpeak dashboard: open the address it printed, with its token")
        #expect(seen[1].title == "offpeak: \(workspace.root.lastPathComponent)")
        #expect(seen[1].texts["spent"]?.count == 1)
        #expect(seen[2].texts["run"] == [reefsRun], "the cookie carried the token: \(seen[2].body)")

        func curl(_ path: String, _ extra: [String] = []) throws -> String {
            try CommandResult.run(
                URL(fileURLWithPath: "/usr/bin/curl"),
                ["-s", "-o", "/dev/null", "-w", "%{http_code}", base + path] + extra
            ).stdout
        }
        #expect(try curl("/api/status.json") == "401")
        let wrong = token.dropLast() + (token.hasSuffix("0") ? "1" : "0")
        #expect(try curl("/api/status.json", ["-H", "Authorization: Bearer \(wrong)"]) == "401")
        #expect(try curl("/api/status.json", ["-H", "Authorization: Bearer \(token)"]) == "200")
        #expect(try curl("/", ["-X", "POST", "-H", "Authorization: Bearer \(token)"]) == "405")
        #expect(try Self.reports(workspace, environment) == before, "the store is as it was")
    }
}
