import Foundation

/// Spend and what the naive way would have cost, a point a day for the last `days` local days
/// (today the last, a day with no calls at $0), as an SVG drawn here: no script, no library, no
/// font from elsewhere. Every text in it is a number or a date this code wrote.
struct SpendChart {
    struct Point: Equatable {
        var day: String
        var dollars: Double
        var naive: Double
    }

    let points: [Point]

    init(lines: [CostLine], days: Int, now: Date, calendar: Calendar) {
        let byDay = Dictionary(lines.map { ($0.key, $0.spend) }, uniquingKeysWith: { first, _ in first })
        var points: [Point] = []
        let today = calendar.startOfDay(for: now)
        for back in stride(from: days - 1, through: 0, by: -1) {
            let start = calendar.date(byAdding: .day, value: -back, to: today) ?? today
            let day = LedgerDay(containing: start + 1, calendar: calendar).text
            points.append(
                Point(day: day, dollars: byDay[day]?.dollars ?? 0, naive: byDay[day]?.naiveDollars ?? 0))
        }
        self.points = points
    }

    static let width = 720.0
    static let height = 180.0
    static let margin = 24.0

    /// The chart's one-line summary, under it.
    var note: String {
        let spent = points.reduce(0) { $0 + $1.dollars }
        let naive = points.reduce(0) { $0 + $1.naive }
        return
            "last \(points.count) days: \(Money.dollars(spent)) spent, \(Money.dollars(naive)) the naive way"
    }

    var svg: String {
        let top = max(points.map { max($0.dollars, $0.naive) }.max() ?? 0, 0.000001)
        let step = (Self.width - 2 * Self.margin) / Double(max(points.count - 1, 1))
        func x(_ index: Int) -> String { String(format: "%.1f", Self.margin + Double(index) * step) }
        func y(_ value: Double) -> String {
            String(format: "%.1f", Self.height - Self.margin - value / top * (Self.height - 2 * Self.margin))
        }
        func line(_ value: (Point) -> Double) -> String {
            points.indices.map { "\(x($0)),\(y(value(points[$0])))" }.joined(separator: " ")
        }
        let dots = points.indices.map {
            "<circle class=\"spent\" cx=\"\(x($0))\" cy=\"\(y(points[$0].dollars))\" r=\"2.5\">"
                + "<title>\(points[$0].day): \(Money.dollars(points[$0].dollars)) "
                + "(naive \(Money.dollars(points[$0].naive)))</title></circle>"
        }
        let first = points.first?.day ?? ""
        let last = points.last?.day ?? ""
        return """
            <svg class="chart" viewBox="0 0 \(Int(Self.width)) \(Int(Self.height))" role="img" \
            aria-label="spend by day" xmlns="http://www.w3.org/2000/svg">
            <polyline class="naive" points="\(line { $0.naive })"/>
            <polyline class="spent" points="\(line { $0.dollars })"/>
            \(dots.joined(separator: "\n"))
            <text x="\(Int(Self.margin))" y="\(Int(Self.height - 6))">\(first)</text>
            <text x="\(Int(Self.width - Self.margin))" y="\(Int(Self.height - 6))" text-anchor="end">\(last)</text>
            <text x="\(Int(Self.margin))" y="14">\(Money.dollars(top))</text>
            </svg>
            """
    }
}
