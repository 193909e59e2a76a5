import Foundation
import Hummingbird
import Mustache
import Synchronization

/// What the dashboard shows, read from the store for each request: the pages
/// (`DashboardTemplates`) and each view as JSON. Every text on a page goes through the template's
/// escaping: a job or an item named `<script>` is shown as text.
struct DashboardViews: Sendable {
    let context: WorkspaceContext
    let refresh: Int
    let store: OpenStore

    init(context: WorkspaceContext, refresh: Int) {
        self.context = context
        self.refresh = refresh
        self.store = OpenStore(context: context)
    }

    /// The spans the spend chart shows, in days (today the last); the first is the default.
    static let chartSpans = [30, 90]
    /// Runs the page lists.
    static let runs = 20
    /// Retrying items and schedules the page lists.
    static let listed = 20

    /// `report` as the command line's `--json` writes it; a store that cannot be read is a 503.
    func json(_ report: (WorkspaceReports) throws(OffpeakError) -> some Encodable) -> Response {
        let data: Data
        do { data = try ReportJSON.printed(try store.read(report)) } catch let error
            as OffpeakError
        {
            return Self.plain(Self.status(of: error), error.description + "\n")
        } catch {
            return Self.plain(.internalServerError, "\(error)\n")
        }
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// The status of a read that failed: what the store does not hold (a run's id) is not found
    /// (404); a store that cannot be read, unavailable (503).
    static func status(of error: OffpeakError) -> Hummingbird.HTTPResponse.Status {
        error.status == .dataError ? .notFound : .serviceUnavailable
    }

    static func plain(_ status: Hummingbird.HTTPResponse.Status, _ text: String) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// The main page: now, runs, the deferred queue, money (`days` of spend as a chart, spend by
    /// job, model and tag), the cache, the hosts.
    func page(days: Int, now: Date = Date()) -> Response {
        html { reports throws(OffpeakError) in
            DashboardTemplates.render(
                try DashboardPage.make(reports, views: self, days: days, now: now), "page")
        }
    }

    /// A run's page; 404 for a run the store does not hold.
    func run(id: String, now: Date = Date()) -> Response {
        html { reports throws(OffpeakError) in
            DashboardTemplates.render(
                RunPage(try reports.run(id: id, now: now), head: head(title: id, now: now)), "run")
        }
    }

    /// The page `render` makes from the store; a store that cannot be read is a page that says why
    /// (503), a run that is not there one that says so (404): never a stack trace.
    private func html(_ render: (WorkspaceReports) throws(OffpeakError) -> String) -> Response {
        do { return Self.html(.ok, try store.read(render)) } catch {
            let status = Self.status(of: error)
            let title = status == .notFound ? "not found" : "the store cannot be read"
            return Self.html(
                status,
                DashboardTemplates.render(ErrorPage(title: title, message: error.description), "error"))
        }
    }

    static func html(_ status: Hummingbird.HTTPResponse.Status, _ text: String) -> Response {
        Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    func head(title: String, now: Date) -> PageHead {
        PageHead(
            title: title, workspace: context.workspace.root.path, refresh: refresh > 0 ? refresh : nil,
            now: Timestamp.text(now))
    }
}

/// The workspace's store, opened for reading at the first request that can and kept open for the
/// next ones (a PostgreSQL store's connections too), so a page pays for its reads, not for opening
/// the store. Reads see what every process has committed. A read that fails drops it: the next
/// request opens it again (a store that was moved, a server that went away).
final class OpenStore: Sendable {
    let context: WorkspaceContext
    private let opened = Mutex<WorkspaceReports?>(nil)

    init(context: WorkspaceContext) {
        self.context = context
    }

    func read<Value>(_ body: (WorkspaceReports) throws(OffpeakError) -> Value) throws(OffpeakError) -> Value {
        let reports: WorkspaceReports
        if let open = opened.withLock({ $0 }) {
            reports = open
        } else {
            reports = try context.reports()
            opened.withLock { $0 = reports }
        }
        do { return try body(reports) } catch {
            if error.status != .dataError { opened.withLock { $0 = nil } }
            throw error
        }
    }
}

/// What the top of every page shows.
struct PageHead {
    let title: String
    let workspace: String
    let refresh: Int?
    let now: String
}

/// The error page's model.
struct ErrorPage {
    let title: String
    let message: String
}

/// A name and its value, as a row of a two-column table.
struct Fact {
    let name, value: String
}

/// A table of spend by one key, as the page prints it.
struct CostTable {
    struct Line {
        let key, calls, dollars, naive, saved: String
    }
    let id: String
    let key: String
    let lines: [Line]

    /// The lines as `offpeak costs` prints them (`CostReport.printed`): by tag, the untagged calls'
    /// line too, then the total; none for a ledger with nothing in it.
    init(id: String, key: String, lines report: (lines: [CostLine], total: Spend, untagged: Spend?)) {
        self.id = id
        self.key = key
        let printed = CostReport.printed(report.lines, total: report.total, untagged: report.untagged)
        self.lines = (printed.count > 1 ? printed : []).map { line in
            Line(
                key: line.key, calls: "\(line.spend.calls)", dollars: Money.dollars(line.spend.dollars),
                naive: Money.dollars(line.spend.naiveDollars), saved: Money.dollars(line.spend.savedDollars))
        }
    }
}

/// The main page's model: every value already a text, as the template prints it.
struct DashboardPage {
    struct Run {
        let job, id, state, items, percent, calls, dollars, why: String
    }
    struct Waiting {
        let job, since, host, items, why: String
    }
    struct Retry {
        let job, item, attempts, next, error: String
    }
    struct Schedule {
        let job, cron, next, last: String
    }
    struct Rows<Row> {
        let rows: [Row]
        /// Nil for no rows: the template then leaves the table out.
        static func of(_ rows: [Row]) -> Rows? { rows.isEmpty ? nil : Rows(rows: rows) }
    }
    struct Span {
        let days: Int
        let current: Bool
    }
    struct Host {
        let name, version, tick, status, runsHeld, callsInFlight, conditions: String
    }

    let head: PageHead
    let conditions: String
    let spentToday: String
    let budgets: [String]
    let scheduleTable: Rows<Schedule>?
    let runs: [Run]
    let waiting: [Waiting]
    let retryTable: Rows<Retry>?
    let spans: [Span]
    let chart: String
    let chartNote: String
    let waitingSaved: String?
    let byJob, byModel: CostTable
    let byTag: CostTable?
    let cache: [Fact]
    let hosts: [Host]

    /// The page, its reads of the store made at once (`Concurrently`): it takes as long as the
    /// longest of them. Money reads only the lines it shows, the chart only its days.
    static func make(_ reports: WorkspaceReports, views: DashboardViews, days: Int, now: Date)
        throws(OffpeakError)
        -> DashboardPage
    {
        let store = reports.store
        let calendar = Calendar.current
        let since = calendar.date(byAdding: .day, value: 1 - days, to: calendar.startOfDay(for: now))
        let gate = views.context.gate()
        let status = Concurrent { () throws(OffpeakError) in
            try reports.status(limit: DashboardViews.runs, now: now)
        }
        let queue = Concurrent { () throws(OffpeakError) in try reports.queue(conditions: gate.read()) }
        let byDay = Concurrent { () throws(OffpeakError) in
            try CostReport.lines(store: store, by: .day, calendar: calendar, since: since).lines
        }
        let byJob = Concurrent { () throws(OffpeakError) in
            try CostReport.lines(store: store, by: .job, calendar: calendar)
        }
        let byModel = Concurrent { () throws(OffpeakError) in
            try CostReport.lines(store: store, by: .model, calendar: calendar)
        }
        let tags = Concurrent { () throws(OffpeakError) in try store.ledger.costsByTag() }
        let waiting = Concurrent { () throws(OffpeakError) in try store.ledger.waitingSavings() }
        let cache = Concurrent { () throws(OffpeakError) in try reports.cacheStats() }
        let hosts = Concurrent { () throws(OffpeakError) in try reports.hosts(now: now) }
        let schedules = Concurrent { () throws(OffpeakError) in try reports.schedules() }
        Concurrently.run([status, queue, byDay, byJob, byModel, tags, waiting, cache, hosts, schedules])

        let chart = SpendChart(lines: try byDay.value(), days: days, now: now, calendar: calendar)
        let jobs = try byJob.value()
        let byTag = CostReport.tagLines(try tags.value(), total: jobs.total)
        let saved = try waiting.value()
        let today = try status.value().spendToday
        return DashboardPage(
            head: views.head(title: views.context.workspace.root.lastPathComponent, now: now),
            conditions: try queue.value().now ?? "conditions not read",
            spentToday: "\(Money.dollars(today.dollars)) for \(Plural.count(today.calls, "call"))",
            budgets: (try status.value().budgets ?? []).map { TextTable.oneLine($0.text) },
            scheduleTable: .of(
                try schedules.value().prefix(DashboardViews.listed).map { record in
                    Schedule(
                        job: record.job, cron: record.cron,
                        next: record.nextDueAt.map { Timestamp.text($0) } ?? "never",
                        last: record.lastFiredAt.map { Timestamp.text($0) } ?? "-")
                }),
            runs: try status.value().runs.map { run in
                Run(
                    job: run.job, id: run.id,
                    state: run.host.map { "\(run.state.rawValue) on \($0)" } ?? run.state.rawValue,
                    items: run.itemsCell, percent: Self.percent(run.itemsDone, of: run.itemsTotal),
                    calls: run.spend.callsCell, dollars: Money.dollars(run.spend.dollars), why: run.why)
            },
            waiting: try queue.value().deferred.map { entry in
                Waiting(
                    job: entry.job, since: Timestamp.text(entry.deferredAt), host: entry.host ?? "-",
                    items: "\(entry.itemsWaiting)", why: entry.reasons.joined(separator: "; "))
            },
            retryTable: .of(
                try queue.value().retrying.prefix(DashboardViews.listed).map { retry in
                    Retry(
                        job: retry.job, item: retry.item, attempts: "\(retry.attempts)",
                        next: retry.nextAttemptAt.map { Timestamp.text($0) } ?? "now",
                        error: retry.error ?? "")
                }),
            spans: DashboardViews.chartSpans.map { Span(days: $0, current: $0 == days) },
            chart: chart.svg, chartNote: chart.note,
            waitingSaved: saved.calls > 0
                ? "saved by waiting for cheaper prices: \(Money.dollars(saved.dollars)) on "
                    + Plural.count(saved.calls, "call") : nil,
            byJob: CostTable(id: "by-job", key: "job", lines: jobs),
            byModel: CostTable(id: "by-model", key: "model", lines: try byModel.value()),
            byTag: byTag.lines.isEmpty ? nil : CostTable(id: "by-tag", key: "tag", lines: byTag),
            cache: Self.cache(try cache.value()),
            hosts: try hosts.value().hosts.map { host in
                Host(
                    name: host.name, version: host.version, tick: Timestamp.text(host.lastTickStartedAt),
                    status: host.statusCell, runsHeld: "\(host.runsHeld)",
                    callsInFlight: "\(host.callsInFlight)",
                    conditions: host.conditions)
            })
    }

    /// `done` of `total` as a whole percent, for a `<progress>` bar.
    static func percent(_ done: Int, of total: Int) -> String {
        "\(Int((Double(done) / Double(max(total, 1)) * 100).rounded()))"
    }

    static func cache(_ stats: CacheStatsReport) -> [Fact] {
        let asked = stats.hitsTotal + stats.missesTotal
        let rate = asked > 0 ? String(format: "%.1f %%", Double(stats.hitsTotal) / Double(asked) * 100) : "-"
        return [
            Fact(name: "entries", value: "\(stats.entries) (\(stats.expiredEntries) expired)"),
            Fact(
                name: "size",
                value:
                    "\(ReportFormat.bytes(stats.rawBytes)) raw, \(ReportFormat.bytes(stats.storedBytes)) compressed"
                    + (stats.compressionRatio.map { String(format: " (%.2fx)", $0) } ?? "")),
            Fact(name: "hit rate", value: "\(rate) (\(stats.hitsTotal) hits, \(stats.missesTotal) misses)"),
            Fact(name: "hits today", value: "\(stats.hitsToday) (\(stats.missesToday) misses)"),
            Fact(
                name: "saved",
                value:
                    "\(Money.dollars(stats.savedDollarsToday)) today, \(Money.dollars(stats.savedDollarsTotal)) in all"
            ),
            Fact(name: "oldest", value: stats.oldest.map { Timestamp.text($0) } ?? "-"),
            Fact(name: "newest", value: stats.newest.map { Timestamp.text($0) } ?? "-"),
        ]
    }
}

/// A run's page model.
struct RunPage {
    struct State {
        let state, count: String
        let first: [Item]
        let more: String?
    }
    struct Item {
        let name: String
        let error: String?
    }
    struct Batch {
        let id, remote, status, progress, submitted: String
    }
    struct Audit {
        let model, agreed, now, answers: String
    }

    let head: PageHead
    let id: String
    let facts: [Fact]
    let percent: String
    let items: String
    let states: [State]
    let batches: [Batch]
    let audits: [Audit]
    let outputs: RunReport.Outputs?

    init(_ report: RunReport, head: PageHead) {
        let run = report.run
        self.head = head
        id = run.id
        var facts = [
            Fact(name: "job", value: run.job),
            Fact(
                name: "state", value: run.host.map { "\(run.state.rawValue) on \($0)" } ?? run.state.rawValue),
            Fact(name: "model", value: "\(run.model) (\(report.provider), \(report.tier) tier)"),
            Fact(name: "created", value: Timestamp.text(run.createdAt)),
        ]
        if let started = report.startedAt {
            facts.append(Fact(name: "started", value: Timestamp.text(started)))
        }
        if let finished = report.finishedAt {
            facts.append(Fact(name: "finished", value: Timestamp.text(finished)))
        }
        facts.append(Fact(name: "cost", value: String(run.spend.costLine.dropFirst("cost: ".count))))
        if !run.why.isEmpty { facts.append(Fact(name: "why", value: run.why)) }
        self.facts = facts
        percent = DashboardPage.percent(run.itemsDone, of: run.itemsTotal)
        items = run.itemsCell + " items"
        states = report.states.map { line in
            State(
                state: line.state, count: "\(line.count)",
                first: line.first.map { Item(name: $0.name, error: $0.error) },
                more: line.count > line.first.count ? "\(line.count - line.first.count)" : nil)
        }
        batches = report.batches.map { line in
            Batch(
                id: line.id, remote: line.remoteIdCell, status: line.remoteStatusCell,
                progress: line.progressCell,
                submitted: BatchLine.time(line.submittedAt))
        }
        audits = report.audits.map { line in
            Audit(model: line.model, agreed: line.agreedCell, now: line.nowCell, answers: line.answersCell)
        }
        outputs = report.outputs
    }
}
