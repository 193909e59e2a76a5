import Foundation

/// The local calendar day holding a call: its bounds, and its `YYYY-MM-DD` name.
struct LedgerDay {
    let start: Date
    /// The next day's start: a day is not always 24 hours long.
    let end: Date
    let text: String

    init(containing date: Date, calendar: Calendar) {
        start = calendar.startOfDay(for: date)
        let tomorrow = calendar.date(byAdding: .day, value: 1, to: start) ?? start + 86_400
        end = max(calendar.startOfDay(for: tomorrow), date + 0.001)
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        text = String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }
}

extension LedgerDay {
    /// Spend by local day, newest day first: the walk both engines make (`LedgerStore.costsByDay`).
    /// Only days with calls are visited: after each day, the next is the one holding the first call
    /// at or after its end.
    /// - Parameters:
    ///   - firstCall: when the first call at or after a time (or the first of all, given nil) was made.
    ///   - spend: the sums of a day's rows.
    static func costs<Failure: Error>(
        calendar: Calendar, since: Date? = nil, firstCall: (_ atOrAfter: Date?) throws(Failure) -> Date?,
        spend: (LedgerDay) throws(Failure) -> Spend
    ) throws(Failure) -> [CostLine] {
        var days: [String: Spend] = [:]
        var next = try firstCall(since)
        while let at = next {
            let day = LedgerDay(containing: at, calendar: calendar)
            days[day.text, default: Spend()].add(try spend(day))
            next = try firstCall(day.end)
        }
        return days.keys.sorted(by: >).map { CostLine(key: $0, spend: days[$0] ?? Spend()) }
    }
}
