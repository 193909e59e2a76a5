import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// `costs --by day` groups calls by the local calendar day they were made on, summed in SQL over
/// day bounds computed for the time zone (issue 11, item 6): days of 23 and 25 hours, a zone 5:45
/// ahead of UTC, and calls a moment either side of midnight land where the calendar puts them.
@Suite(.ownThreads) struct CostsByDayTests {
    /// Calls around Berlin's DST changes of 2026 (29 March: 02:00 → 03:00; 25 October: 03:00 →
    /// 02:00) and either side of local midnight, as UTC instants.
    static let instants = [
        "2026-03-28T22:59:59.500Z", "2026-03-28T23:00:00.000Z", "2026-03-29T00:59:00.000Z",
        "2026-03-29T01:00:00.000Z", "2026-03-29T21:59:59.999Z", "2026-03-29T22:00:00.000Z",
        "2026-10-24T21:59:59.000Z", "2026-10-25T00:30:00.000Z", "2026-10-25T01:30:00.000Z",
        "2026-10-25T22:59:00.000Z", "2026-10-25T23:00:00.000Z", "2026-12-31T23:30:00.000Z",
    ]

    static func calendar(_ zone: String) throws -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: zone))
        return calendar
    }

    static func store(_ workspace: TemporaryWorkspace) throws -> Store {
        let store = try StoreTests.store(workspace)
        let parser = ISO8601DateFormatter()
        parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        try store.insertLedger(
            instants.enumerated().map { index, text in
                var entry = StoreCountersTests.ledger(
                    run: "r\(index % 3)", items: 1 + index % 4, hit: index % 5 == 0, failed: index == 7,
                    dollars: Double(index + 1) / 1000)
                entry.at = try #require(parser.date(from: text))
                return entry
            })
        return store
    }

    /// The ledger grouped as `costs --by day` always grouped it: each row's local date, by Calendar.
    static func grouped(_ store: Store, _ calendar: Calendar) throws -> [String: (
        calls: Int, dollars: Double
    )] {
        let order = "FROM ledger ORDER BY at, id"
        let ats = try store.values("SELECT at \(order)", as: Date.self).compactMap { $0 }
        let hits = try store.values("SELECT cache_hit \(order)", as: Bool.self).compactMap { $0 }
        let dollars = try store.values("SELECT dollars \(order)", as: Double.self).compactMap { $0 }
        #expect(ats.count == instants.count && hits.count == ats.count && dollars.count == ats.count)
        var days: [String: (calls: Int, dollars: Double)] = [:]
        for (at, (hit, amount)) in zip(ats, zip(hits, dollars)) {
            let parts = calendar.dateComponents([.year, .month, .day], from: at)
            let key = String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
            days[key, default: (0, 0)].calls += hit ? 0 : 1
            days[key, default: (0, 0)].dollars += amount
        }
        return days
    }

    @Test func daysAroundDSTChangesAndMidnightsAreLocalDays() throws {
        let workspace = try TemporaryWorkspace()
        let store = try Self.store(workspace)
        let report = try CostReport.make(store: store, by: .day, calendar: try Self.calendar("Europe/Berlin"))
        #expect(
            report.lines.map(\.key) == [
                "2027-01-01", "2026-10-26", "2026-10-25", "2026-10-24", "2026-03-30", "2026-03-29",
                "2026-03-28",
            ])
        let calls = Dictionary(uniqueKeysWithValues: report.lines.map { ($0.key, $0.spend.calls) })
        #expect(calls["2026-03-29"] == 4 && calls["2026-10-25"] == 3 && calls["2026-03-28"] == 0)
        #expect(report.total.calls == 9 && report.total.failedCalls == 1)
    }

    @Test func everyZoneGroupsAsItsCalendarDoes() throws {
        let workspace = try TemporaryWorkspace()
        let store = try Self.store(workspace)
        for zone in [
            "UTC", "Europe/Berlin", "Asia/Kathmandu", "America/St_Johns", "Pacific/Apia",
            "Pacific/Kiritimati",
        ] {
            let calendar = try Self.calendar(zone)
            let report = try CostReport.make(store: store, by: .day, calendar: calendar)
            let expected = try Self.grouped(store, calendar)
            #expect(report.lines.map(\.key) == expected.keys.sorted(by: >), "\(zone)")
            for line in report.lines {
                #expect(line.spend.calls == expected[line.key]?.calls, "\(zone) \(line.key)")
                #expect(line.spend.dollars == expected[line.key]?.dollars, "\(zone) \(line.key)")
            }
        }
    }
}
