import Foundation
import Testing

@testable import Offpeak

/// Issue 48, item 1: prices that change with the clock. A model's entry may hold windows (days and
/// hours in a stated zone, the weekdays possibly in another) at their own prices; a call is priced
/// at the moment it was billed, and a reservation at the dearest prices it may land in.
struct PriceWindowsTests {
    static func at(_ text: String) throws -> Date {
        try #require(ISO8601DateFormatter().date(from: text))
    }

    static func table(_ json: String, source: String = "prices.json") throws -> PriceTable {
        do { return try PriceTable.decode(Data(json.utf8), source: source) } catch {
            Issue.record("\(error)")
            throw error
        }
    }

    /// The error a price file gets, as the user reads it.
    static func error(_ json: String) -> String? {
        do {
            _ = try PriceTable.decode(Data(json.utf8), source: "prices.json")
            return nil
        } catch { return error.description }
    }

    // MARK: DeepSeek's bundled windows

    @Test func deepSeekBillsHalfOffPeakOnWeekdayNightsAndAllWeekend() throws {
        let flash = try #require(PriceTable.bundled.cost(of: "deepseek-flash"))
        #expect(flash.inputCostPerToken == 3e-7 && flash.outputCostPerToken == 1.2e-6)
        #expect(flash.cacheReadInputTokenCost == 6e-9)
        #expect(flash.windows?.source == "api-docs.deepseek.com/quick_start/pricing, read 2026-11-29")
        // 2026-11-30 is a Monday.
        let cases: [(String, String)] = [
            ("2026-11-30T00:59:59Z", "off-peak"), ("2026-11-30T01:00:00Z", "peak"),
            ("2026-11-30T03:59:59Z", "peak"), ("2026-11-30T04:00:00Z", "off-peak"),
            ("2026-11-30T05:59:00Z", "off-peak"), ("2026-11-30T06:00:00Z", "peak"),
            ("2026-11-30T09:59:59Z", "peak"), ("2026-11-30T10:00:00Z", "off-peak"),
            ("2026-11-30T23:59:59Z", "off-peak"), ("2026-12-04T07:00:00Z", "peak"),  // Friday
            ("2026-12-05T07:00:00Z", "off-peak"), ("2026-12-06T02:00:00Z", "off-peak"),  // the weekend
        ]
        for (instant, window) in cases {
            #expect(flash.at(try Self.at(instant)).window == window, "\(instant)")
        }
        let offPeak = flash.at(try Self.at("2026-11-30T12:00:00Z"))
        #expect(offPeak.inputCostPerToken == 1.5e-7 && offPeak.outputCostPerToken == 6e-7)
        #expect(offPeak.cacheReadInputTokenCost == 3e-9)
        let peak = flash.at(try Self.at("2026-11-30T07:00:00Z"))
        #expect(peak.inputCostPerToken == 3e-7 && peak.window == "peak")
        let usage = Usage(input: 1_000_000, output: 1_000_000, cacheRead: 1_000_000)
        #expect(abs(peak.dollars(for: usage, lane: .live) - 1.506) < 1e-12)
        #expect(abs(offPeak.dollars(for: usage, lane: .live) - 0.753) < 1e-12)
        let pro = try #require(
            PriceTable.bundled.cost(of: "deepseek-v4-pro", at: try Self.at("2026-12-05T07:00:00Z")))
        #expect(
            pro.inputCostPerToken == 6.6e-7 && pro.outputCostPerToken == 1.98e-6 && pro.window == "off-peak")
    }

    @Test func theNextChangeSkipsWindowsOfOneNameAndPriceAndFindsMondaysPeak() throws {
        let windows = try #require(PriceTable.bundled.cost(of: "deepseek-flash")?.windows)
        #expect(
            windows.nextChange(after: try Self.at("2026-11-30T00:30:00Z"))
                == (try Self.at("2026-11-30T01:00:00Z")))
        #expect(
            windows.nextChange(after: try Self.at("2026-11-30T01:00:00Z"))
                == (try Self.at("2026-11-30T04:00:00Z")))
        #expect(
            windows.nextChange(after: try Self.at("2026-11-30T04:00:00Z"))
                == (try Self.at("2026-11-30T06:00:00Z")))
        // Friday 10:00 to Monday 01:00 is off-peak throughout: the weekend's window is the same period.
        #expect(
            windows.nextChange(after: try Self.at("2026-12-04T10:00:00Z"))
                == (try Self.at("2026-12-07T01:00:00Z")))
        // Within a second of a change, and a fraction of a second past one.
        #expect(
            windows.nextChange(
                after: Date(
                    timeIntervalSince1970: try Self.at("2026-11-30T00:59:59Z").timeIntervalSince1970 + 0.5))
                == (try Self.at("2026-11-30T01:00:00Z")))
        #expect(windows.nextChange(after: try Self.at("2026-11-30T00:30:00Z"), horizon: 60) == nil)
    }

    @Test func aReservationTakesTheDearestPricesBeforeItsTimeout() throws {
        let table = PriceTable.bundled
        let start = try Self.at("2026-11-30T00:58:00Z")
        #expect(table.cost(of: "deepseek-flash", from: start, to: start + 60)?.window == "off-peak")
        #expect(
            table.cost(of: "deepseek-flash", from: start, to: start + 120)?.window == "peak",
            "it may land at 01:00")
        #expect(table.cost(of: "deepseek-flash", from: start, to: start + 4 * 3600)?.window == "peak")
        let late = try Self.at("2026-11-30T03:59:00Z")
        #expect(
            table.cost(of: "deepseek-flash", from: late, to: late + 600)?.window == "peak",
            "peak at its start")
        #expect(table.cost(of: "claude-haiku-4-5", from: start, to: start + 600)?.window == nil)
    }

    // MARK: Windows a price file declares

    static let wrapping = """
        {"night-model": {"input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06,
          "price_windows": {"time_zone": "Europe/Berlin", "outside": "day",
            "windows": [{"name": "night", "hours": "22:00-02:00", "input_cost_per_token": 2.5e-07, "factor": 0.5}]}}}
        """

    @Test func aWindowThatWrapsMidnightCoversBothEndsOfTheDay() throws {
        let price = try #require(try Self.table(Self.wrapping).cost(of: "night-model"))
        // Berlin is UTC+1 in winter.
        #expect(price.at(try Self.at("2026-12-01T20:59:59Z")).window == "day")
        #expect(price.at(try Self.at("2026-12-01T21:00:00Z")).window == "night")
        #expect(price.at(try Self.at("2026-12-01T23:30:00Z")).window == "night")
        #expect(price.at(try Self.at("2026-12-02T00:59:59Z")).window == "night")
        #expect(price.at(try Self.at("2026-12-02T01:00:00Z")).window == "day")
        let night = price.at(try Self.at("2026-12-01T22:00:00Z"))
        #expect(night.inputCostPerToken == 2.5e-7, "named: its own")
        #expect(night.outputCostPerToken == 1e-6, "not named: the factor times the entry's")
        let windows = try #require(price.windows)
        #expect(
            windows.nextChange(after: try Self.at("2026-12-01T12:00:00Z"))
                == (try Self.at("2026-12-01T21:00:00Z")))
        #expect(
            windows.nextChange(after: try Self.at("2026-12-01T21:00:00Z"))
                == (try Self.at("2026-12-02T01:00:00Z")))
    }

    /// A price page may give its hours in UTC and its weekdays in the provider's own zone: at 02:00 UTC
    /// on a Saturday it is still Friday in Los Angeles, so Friday's prices hold.
    @Test func theWeekdayIsReadInItsOwnZoneWhereItDiffersFromTheHours() throws {
        let json = """
            {"m": {"input_cost_per_token": 1e-06, "output_cost_per_token": 1e-06,
              "price_windows": {"time_zone": "UTC", "weekday_time_zone": "America/Los_Angeles",
                "windows": [{"name": "weekend", "days": "sat-sun", "factor": 0.5}]}}}
            """
        let price = try #require(try Self.table(json).cost(of: "m"))
        // Saturday 02:00 UTC is Friday 18:00 in Los Angeles (UTC-8 in December).
        #expect(price.at(try Self.at("2026-12-05T02:00:00Z")).window == "standard")
        #expect(price.at(try Self.at("2026-12-05T08:00:00Z")).window == "weekend", "Saturday 00:00 there")
        // Monday 05:00 UTC is still Sunday there.
        #expect(price.at(try Self.at("2026-12-07T05:00:00Z")).window == "weekend")
        #expect(price.at(try Self.at("2026-12-07T08:00:00Z")).window == "standard")
        let windows = try #require(price.windows)
        #expect(
            windows.nextChange(after: try Self.at("2026-12-04T12:00:00Z"))
                == (try Self.at("2026-12-05T08:00:00Z")))
        #expect(
            windows.nextChange(after: try Self.at("2026-12-05T08:00:00Z"))
                == (try Self.at("2026-12-07T08:00:00Z")))
    }

    /// Europe/Berlin springs forward on 2026-03-29: 02:00 CET becomes 03:00 CEST at 01:00 UTC. A
    /// window from 02:30 opens as the clock jumps past it; UTC windows stay where they are.
    @Test func aDaylightSavingJumpIsFollowedMinuteByMinute() throws {
        let json = """
            {"m": {"input_cost_per_token": 1e-06, "output_cost_per_token": 1e-06,
              "price_windows": {"time_zone": "Europe/Berlin", "windows": [{"hours": "02:30-03:30", "factor": 0.5}]}}}
            """
        let windows = try #require(try Self.table(json).cost(of: "m")?.windows)
        let opens = windows.nextChange(after: try Self.at("2026-03-28T23:00:00Z"))
        #expect(
            opens == (try Self.at("2026-03-29T01:00:00Z")), "03:00 CEST, the first minute past 02:30 there")
        #expect(
            windows.nextChange(after: try Self.at("2026-03-29T01:00:00Z"))
                == (try Self.at("2026-03-29T01:30:00Z")))
        // The day before, an hour of window as written: 02:30 to 03:30 CET.
        #expect(
            windows.nextChange(after: try Self.at("2026-03-28T00:00:00Z"))
                == (try Self.at("2026-03-28T01:30:00Z")))
        // DeepSeek's UTC hours do not move for a user in Berlin, whose clocks change that night.
        let deepSeek = try #require(PriceTable.bundled.cost(of: "deepseek-flash")?.windows)
        #expect(
            deepSeek.nextChange(after: try Self.at("2026-03-30T00:30:00Z"))
                == (try Self.at("2026-03-30T01:00:00Z")))
        #expect(
            deepSeek.nextChange(after: try Self.at("2026-03-27T12:00:00Z"))
                == (try Self.at("2026-03-30T01:00:00Z")))
    }

    /// LiteLLM's `off_peak_pricing`: `hours_utc`, every day, at the prices it names.
    @Test func liteLLMsOffPeakPricingIsRead() throws {
        let json = """
            {"deepseek-chat": {"input_cost_per_token": 2.7e-07, "output_cost_per_token": 1.1e-06,
              "off_peak_pricing": {"hours_utc": "16:30-00:30", "input_cost_per_token": 1.35e-07,
                "output_cost_per_token": 5.5e-07, "cache_read_input_token_cost": 3.5e-08}}}
            """
        let price = try #require(try Self.table(json).cost(of: "deepseek-chat"))
        let night = price.at(try Self.at("2026-12-01T00:29:00Z"))
        #expect(night.window == "off-peak" && night.inputCostPerToken == 1.35e-7)
        #expect(night.cacheReadInputTokenCost == 3.5e-8)
        let day = price.at(try Self.at("2026-12-01T00:30:00Z"))
        #expect(day.window == "standard" && day.inputCostPerToken == 2.7e-7)
    }

    // MARK: Mistakes, named by file, line and field

    @Test func aBadWindowNamesTheFileTheLineAndTheField() {
        #expect(
            Self.error(
                """
                {
                  "m": {
                    "input_cost_per_token": 1e-06,
                    "price_windows": {"windows": [
                      {"hours": ["01:00-04:00", "25:00-03:00"], "factor": 0.5}
                    ]}
                  }
                }
                """)
                == "prices.json:5:33: price entry \"m\" is not valid (price_windows.windows[0].hours[1]: "
                + "25:00 is not a time of day (expected HH:MM-HH:MM, times from 00:00 to 24:00))")
        #expect(
            Self.error(
                """
                {"m": {"input_cost_per_token": 1e-06,
                  "price_windows": {"time_zone": "Mars/Olympus", "windows": [{"factor": 0.5}]}}}
                """)
                == "prices.json:2:34: price entry \"m\" is not valid (price_windows.time_zone: \"Mars/Olympus\" "
                + "is not a time zone (expected an IANA name like UTC or Asia/Shanghai))")
        #expect(
            Self.error(
                """
                {"m": {"input_cost_per_token": 1e-06,
                  "price_windows": {"windows": [
                    {"days": "mon-fri", "hours": "10:00-24:00", "factor": 0.5},
                    {"name": "late", "days": ["fri", "sat"], "hours": "22:00-23:00", "factor": 0.4}]}}}
                """)
                == "prices.json:4:5: price entry \"m\" is not valid (price_windows.windows[1]: overlaps "
                + "windows[0] on Friday at 22:00; windows may not overlap)")
        #expect(
            Self.error(
                """
                {"m": {"input_cost_per_token": 1e-06,
                  "price_windows": {"windows": [{"days": "mon-funday", "factor": 0.5}]}}}
                """)
                == "prices.json:2:42: price entry \"m\" is not valid (price_windows.windows[0].days: \"funday\" "
                + "is not a weekday (expected sun, mon, tue, wed, thu, fri, sat, or a range like mon-fri))")
        #expect(
            Self.error(
                """
                {"m": {"input_cost_per_token": 1e-06,
                  "price_windows": {"windows": [{"name": "cheap", "hours": "01:00-02:00"}]}}}
                """)
                == "prices.json:2:33: price entry \"m\" is not valid (price_windows.windows[0]: a window "
                + "gives no prices (expected factor, input_cost_per_token, output_cost_per_token or "
                + "cache_read_input_token_cost))")
        #expect(
            Self.error(
                """
                {"m": {"input_cost_per_token": 1e-06,
                  "off_peak_pricing": {"hours_utc": ["16:00-20:00", "19:00-21:00"], "factor": 0.5}}}
                """)
                == "prices.json:2:53: price entry \"m\" is not valid (off_peak_pricing.hours_utc[1]: overlaps "
                + "hours_utc[0] on Sunday at 19:00; windows may not overlap)")
    }

    /// The price file docs/budgets-and-costs.md shows reads as it says.
    @Test func theGuidesPriceFileReadsAsItSays() throws {
        let guide = try String(
            contentsOf: LayerTests.library.deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("docs/budgets-and-costs.md"), encoding: .utf8)
        let section = try #require(guide.components(separatedBy: "## Prices that change with the clock").last)
        let json = try #require(
            section.components(separatedBy: "```json\n").dropFirst().first?.components(separatedBy: "```")
                .first)
        let price = try #require(try Self.table(json).cost(of: "my-model"))
        // Friday 23:00 UTC is Saturday in Shanghai: the weekend's window.
        #expect(price.at(try Self.at("2026-12-04T23:00:00Z")).window == "off-peak")
        #expect(price.at(try Self.at("2026-12-04T05:00:00Z")).window == "peak")
        #expect(price.at(try Self.at("2026-12-04T05:00:00Z")).outputCostPerToken == 4e-6)
        #expect(price.at(try Self.at("2026-12-04T12:00:00Z")).outputCostPerToken == 2e-6)
    }

    @Test func anHTTPDateIsReadAsTheServerWroteIt() throws {
        #expect(HTTPDate.parse("Mon, 30 Nov 2026 01:00:07 GMT") == (try Self.at("2026-11-30T01:00:07Z")))
        #expect(HTTPDate.parse("Monday, 30-Nov-26 01:00:07 GMT") == nil)
        #expect(HTTPDate.parse("Mon, 30 Nov 2026 25:00:07 GMT") == nil)
        #expect(HTTPDate.parse(nil) == nil)
    }
}
