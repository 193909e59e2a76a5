import Foundation

extension LedgerDay {
    /// Every local day from the one holding `first` to the one holding `last`, each starting where
    /// the one before ends: the days `costs` walks to (the ones with calls) are among them, with
    /// the same bounds, as long as no call lies in the last millisecond of its day. Nil when the
    /// calendar's days do not follow one another so (a day that would not start where the one
    /// before ends), or when there would be more than `limit` of them.
    static func days(from first: Date, through last: Date, calendar: Calendar, limit: Int = 100_000)
        -> [LedgerDay]?
    {
        var day = LedgerDay(containing: first, calendar: calendar)
        var days = [day]
        while day.end <= last {
            let next = LedgerDay(containing: day.end, calendar: calendar)
            guard next.start == day.end, next.end > next.start, days.count < limit else { return nil }
            days.append(next)
            day = next
        }
        return days
    }
}
