import Foundation
import Hummingbird
import Mustache

/// What the dashboard shows, read from the store for each request: the page (`DashboardTemplates`)
/// and each view as JSON. Every text on the page goes through the template's escaping: a job or an
/// item named `<script>` is shown as text.
struct DashboardViews: Sendable {
    let context: WorkspaceContext
    let refresh: Int

    /// Days the spend chart shows, today the last.
    static let chartDays = 30

    func queue() throws(OffpeakError) -> QueueReport {
        try QueueReport.make(store: try context.openStoreForReading(), conditions: context.gate().read())
    }

    func cacheStats() throws(OffpeakError) -> CacheStatsReport {
        CacheStatsReport(try context.openCache(forReading: true).stats())
    }

    /// `report` as the command line's `--json` writes it.
    func json(_ report: () throws -> some Encodable) throws -> Response {
        let data: Data
        do { data = try ReportJSON.encode(try report()) } catch let error as OffpeakError {
            return Self.plain(.serviceUnavailable, error.description + "\n")
        }
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func plain(_ status: Hummingbird.HTTPResponse.Status, _ text: String) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// The page: now, runs, the deferred queue, money (the last 30 days as a chart, spend by job),
    /// the cache. A store that cannot be read is an error page saying why (503).
    func page(now: Date = Date()) throws -> Response {
        let model: DashboardPage
        do { model = try DashboardPage.make(self, now: now) } catch {
            return Self.html(
                .serviceUnavailable, DashboardTemplates.render(ErrorPage(message: error.description)))
        }
        return Self.html(.ok, DashboardTemplates.render(model))
    }

    static func html(_ status: Hummingbird.HTTPResponse.Status, _ text: String) -> Response {
        Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

/// The error page's model.
struct ErrorPage {
    let message: String
}

/// The page's model: every value already a text, as the template prints it.
struct DashboardPage {
    struct Run {
        let job, id, state, items, percent, dollars, why: String
    }
    struct Waiting {
        let job, since, why: String
    }
    struct Cost {
        let key, calls, dollars, naive, saved: String
    }

    let workspace: String
    let refresh: Int?
    let now: String
    let conditions: String
    let spentToday: String
    let runs: [Run]
    let waiting: [Waiting]
    let chart: String
    let chartNote: String
    let costs: [Cost]
    let cache: String

    static func make(_ views: DashboardViews, now: Date) throws(OffpeakError) -> DashboardPage {
        let context = views.context
        let status = try context.status(limit: 20)
        let queue = try views.queue()
        let cache = try views.cacheStats()
        let byDay = try context.costs(by: .day)
        let byJob = try context.costs(by: .job)
        let chart = SpendChart(
            lines: byDay.lines, days: DashboardViews.chartDays, now: now, calendar: .current)
        let today = status.spendToday
        return DashboardPage(
            workspace: context.workspace.root.path, refresh: views.refresh > 0 ? views.refresh : nil,
            now: Timestamp.text(now), conditions: queue.now ?? "conditions not read",
            spentToday: "\(Money.dollars(today.dollars)) for \(Plural.count(today.calls, "call"))",
            runs: status.runs.map { run in
                let total = max(run.itemsTotal, 1)
                return Run(
                    job: run.job, id: run.id, state: run.state.rawValue,
                    items: "\(run.itemsDone) of \(run.itemsTotal)",
                    percent: "\(Int((Double(run.itemsDone) / Double(total) * 100).rounded()))",
                    dollars: Money.dollars(run.spend.dollars), why: run.reason ?? "")
            },
            waiting: queue.deferred.map { entry in
                Waiting(
                    job: entry.job, since: Timestamp.text(entry.deferredAt),
                    why: entry.reasons.joined(separator: "; "))
            },
            chart: chart.svg, chartNote: chart.note,
            costs: (byJob.lines + [CostLine(key: "total", spend: byJob.total)]).map { line in
                Cost(
                    key: line.key, calls: "\(line.spend.calls)", dollars: Money.dollars(line.spend.dollars),
                    naive: Money.dollars(line.spend.naiveDollars),
                    saved: Money.dollars(line.spend.savedDollars))
            },
            cache: cache.text)
    }
}
