import Foundation
import Testing

@testable import Offpeak

/// The ledger's reports add their dollars in one order on both engines (`id` within a job or a
/// model, `at` then `id` within a day), so sums whose doubles depend on that order (thirds and
/// sevenths, not binary fractions) come out as the very same doubles, whichever way PostgreSQL
/// reads a report: one statement over every day, or the walk from day to day it falls back to when
/// a call lies in a day's last milliseconds.
struct LedgerSumOrderTests {
    typealias F = RoleFixtures
    typealias L = LedgerStoreRoleTests

    /// 400 calls over twelve days around New York's change from daylight saving time (2027-11-07),
    /// written out of time order, jobs and models interleaved; with `nearMidnight`, one more a
    /// millisecond before a local midnight in New York.
    static func entries(nearMidnight: Bool) -> [LedgerEntry] {
        var generator = StoreCountersTests.SplitMix(state: 22)
        let start = Date(timeIntervalSince1970: 1_825_027_200)  // 2027-11-01 00:00 UTC
        var entries = (0..<400).map { index in
            let at = start + Double(generator.next() % 1_036_800_000) / 1_000
            let dollars = Double(generator.next() % 1_000 + 1) / 3_000 + Double(index % 7) / 7e4
            return L.call(
                run: "r1", job: "j\(generator.next() % 3)", model: "m\(generator.next() % 4)", at: at,
                dollars: dollars, naive: dollars * 1.7, cacheHit: index % 9 == 0)
        }
        if nearMidnight {
            // 2027-11-05 00:00 in New York (UTC-4) is 04:00 UTC.
            entries.append(
                L.call(run: "r1", at: Date(timeIntervalSince1970: 1_825_387_200 - 0.001), dollars: 1 / 3))
        }
        return entries
    }

    @Test(arguments: [false, true])
    func bothEnginesAddTheSameDoublesInEveryReport(nearMidnight: Bool) throws {
        let engines = try StoreEngine.allCases.map { engine throws -> StoreRoles in
            let roles = try engine.roles()
            try roles.runs.insert(run: F.run("r1"), requests: [])
            try L.book(roles, Self.entries(nearMidnight: nearMidnight))
            return roles
        }
        let sqlite = engines[0].ledger
        let postgresql = engines[1].ledger
        for key in [CostLine.Key.job, .model] {
            let lines = try sqlite.costs(groupedBy: key)
            #expect(lines.count > 2)
            #expect(try postgresql.costs(groupedBy: key) == lines)
        }
        for zone in ["UTC", "America/New_York", "Asia/Kathmandu", "Pacific/Chatham"] {
            let calendar = L.calendar(zone)
            let days = try sqlite.costsByDay(calendar: calendar)
            #expect(days.count >= 12)
            #expect(try postgresql.costsByDay(calendar: calendar) == days, "\(zone)")
        }
        let since = Date(timeIntervalSince1970: 1_825_675_200)
        #expect(try postgresql.spend(since: since) == (try sqlite.spend(since: since)))
    }

    @Test func daysRunFromTheFirstCallToTheLast() throws {
        let calendar = L.calendar("America/New_York")
        // 2027-11-06 12:00 to 2027-11-08 12:00 in New York; the 7th is 25 hours long.
        let days = try #require(
            LedgerDay.days(
                from: Date(timeIntervalSince1970: 1_825_516_800),
                through: Date(timeIntervalSince1970: 1_825_693_200),
                calendar: calendar))
        #expect(days.map(\.text) == ["2027-11-06", "2027-11-07", "2027-11-08"])
        #expect(days.map { $0.end.timeIntervalSince($0.start) } == [86_400, 90_000, 86_400])
        #expect(zip(days, days.dropFirst()).allSatisfy { $0.end == $1.start })
        let one = try #require(
            LedgerDay.days(from: days[0].start, through: days[0].start, calendar: calendar))
        #expect(one.map(\.text) == ["2027-11-06"])
        #expect(
            LedgerDay.days(from: days[0].start, through: days[2].start, calendar: calendar, limit: 2) == nil)
    }
}
