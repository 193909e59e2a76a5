import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// `ScheduleBook` on a real store: first sight, due times, missed slots, changed schedules.
@Suite(.ownThreads) struct ScheduleBookTests {
    static func spec(_ name: String, schedule: String?, timezone: String? = "UTC") throws -> JobSpec {
        var spec = JobSpec(
            name: name, kind: .prompt, template: try Template("x"), output: "out/\(name)")
        spec.schedule = schedule
        spec.timezone = timezone
        return spec
    }

    static func at(_ text: String) throws -> Date {
        try #require(try? Date(text, strategy: .iso8601))
    }

    let workspace: TemporaryWorkspace
    let book: ScheduleBook

    init() throws {
        workspace = try TemporaryWorkspace()
        book = ScheduleBook(store: try workspace.openStore())
    }

    @Test func aJobSeenForTheFirstTimeIsRecordedAndNotDue() throws {
        let hourly = try Self.spec("hourly", schedule: "0 * * * *")
        let unscheduled = try Self.spec("once", schedule: nil)
        #expect(try book.due([hourly, unscheduled], now: try Self.at("2026-05-17T10:20:00Z")).isEmpty)
        #expect(
            try book.entries() == [
                ScheduleEntry(
                    job: "hourly", expression: "0 * * * *", timezone: "UTC", lastFiredAt: nil,
                    nextDueAt: try Self.at("2026-05-17T11:00:00Z"))
            ])
    }

    @Test func dueFromItsNextDueTimeUntilItFires() throws {
        let hourly = try Self.spec("hourly", schedule: "0 * * * *")
        _ = try book.due([hourly], now: try Self.at("2026-05-17T10:20:00Z"))
        #expect(try book.due([hourly], now: try Self.at("2026-05-17T10:59:59Z")).isEmpty)
        #expect(try book.due([hourly], now: try Self.at("2026-05-17T11:00:00Z")).map(\.name) == ["hourly"])
        #expect(try book.due([hourly], now: try Self.at("2026-05-17T11:04:00Z")).map(\.name) == ["hourly"])
        try book.fired(hourly, at: try Self.at("2026-05-17T11:05:00Z"))
        #expect(try book.due([hourly], now: try Self.at("2026-05-17T11:10:00Z")).isEmpty)
        let entry = try #require(try book.entries().first)
        #expect(entry.lastFiredAt == (try Self.at("2026-05-17T11:05:00Z")))
        #expect(entry.nextDueAt == (try Self.at("2026-05-17T12:00:00Z")))
    }

    @Test func tenMissedSlotsMakeItDueOnce() throws {
        let hourly = try Self.spec("hourly", schedule: "0 * * * *")
        _ = try book.due([hourly], now: try Self.at("2026-05-17T10:20:00Z"))
        // The machine was off from 10:30 to 21:10: slots 11:00 ... 21:00 were missed.
        let back = try Self.at("2026-05-17T21:10:00Z")
        #expect(try book.due([hourly], now: back).map(\.name) == ["hourly"])
        try book.fired(hourly, at: back)
        #expect(try book.due([hourly], now: try Self.at("2026-05-17T21:15:00Z")).isEmpty)
        #expect(try book.due([hourly], now: try Self.at("2026-05-17T21:59:00Z")).isEmpty)
        #expect(try book.due([hourly], now: try Self.at("2026-05-17T22:00:00Z")).map(\.name) == ["hourly"])
    }

    @Test func aChangedExpressionOrZoneIsRecomputedFromNow() throws {
        _ = try book.due(
            [try Self.spec("report", schedule: "0 6 * * *")], now: try Self.at("2026-05-17T10:00:00Z"))
        #expect(try book.entries().first?.nextDueAt == (try Self.at("2026-05-18T06:00:00Z")))
        // Changed to every 15 minutes: recorded again from now, not due at once.
        let often = try Self.spec("report", schedule: "*/15 * * * *")
        #expect(try book.due([often], now: try Self.at("2026-05-17T10:20:00Z")).isEmpty)
        #expect(try book.entries().first?.nextDueAt == (try Self.at("2026-05-17T10:30:00Z")))
        #expect(try book.due([often], now: try Self.at("2026-05-17T10:30:00Z")).map(\.name) == ["report"])
        // The same expression in another zone.
        let berlin = try Self.spec("report", schedule: "*/15 * * * *", timezone: "Asia/Kolkata")
        #expect(try book.due([berlin], now: try Self.at("2026-05-17T10:31:00Z")).isEmpty)
        let entry = try #require(try book.entries().first)
        #expect(entry.timezone == "Asia/Kolkata" && entry.expression == "*/15 * * * *")
        #expect(entry.nextDueAt == (try Self.at("2026-05-17T10:45:00Z")))
    }

    @Test func firesAtWallClockTimesOfTheSpecZone() throws {
        let digest = try Self.spec("digest", schedule: "30 2 * * *", timezone: "Europe/Berlin")
        _ = try book.due([digest], now: try Self.at("2026-03-28T12:00:00Z"))
        // 02:30 does not exist on 2026-03-29 in Berlin: due at the jump, 03:00 CEST.
        #expect(try book.entries().first?.nextDueAt == (try Self.at("2026-03-29T01:00:00Z")))
        try book.fired(digest, at: try Self.at("2026-03-29T01:02:00Z"))
        #expect(try book.entries().first?.nextDueAt == (try Self.at("2026-03-30T00:30:00Z")))
    }

    @Test func anExpressionThatNeverFiresIsNeverDue() throws {
        let never = try Self.spec("never", schedule: "0 0 30 2 *")
        #expect(try book.due([never], now: try Self.at("2026-01-01T00:00:00Z")).isEmpty)
        #expect(try book.due([never], now: try Self.at("2036-01-01T00:00:00Z")).isEmpty)
        #expect(try book.entries().first?.nextDueAt == nil)
    }
}
