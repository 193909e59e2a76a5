import Foundation

/// Reading `price_windows` and LiteLLM's `off_peak_pricing` from a price file. A mistake is a
/// `DecodingError` whose coding path is the field's, so `PriceTable.decode` names the file, the
/// line and the field (`prices.json:9:20: price entry "m" is not valid (price_windows.windows[1].hours:
/// 25:00 is not a time of day …)`).
extension PriceWindows: Decodable {
    private enum CodingKeys: String, CodingKey {
        case timeZone = "time_zone"
        case weekdayTimeZone = "weekday_time_zone"
        case outside, windows, source
    }

    init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        let utc = TimeZone(identifier: "UTC") ?? .gmt
        timeZone = try Self.zone(fields, .timeZone) ?? utc
        weekdayTimeZone = try Self.zone(fields, .weekdayTimeZone) ?? timeZone
        outside = try fields.decodeIfPresent(String.self, forKey: .outside) ?? "standard"
        source = try fields.decodeIfPresent(String.self, forKey: .source)
        windows = try fields.decode([Window].self, forKey: .windows)
        try Self.checkOverlaps(windows, at: fields.codingPath + [CodingKeys.windows])
    }

    private static func zone(_ fields: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws
        -> TimeZone?
    {
        guard let name = try fields.decodeIfPresent(String.self, forKey: key) else { return nil }
        guard let zone = TimeZone(identifier: name) else {
            throw mistake(
                "\"\(name)\" is not a time zone (expected an IANA name like UTC or Asia/Shanghai)",
                at: fields.codingPath + [key])
        }
        return zone
    }

    /// Two windows open at once would leave the price ambiguous: each weekday's minutes are
    /// marked by the window that covers them, and a minute marked twice is the error.
    /// - Parameter list: how the file names the list (`windows`, or LiteLLM's `hours_utc`).
    static func checkOverlaps(_ windows: [Window], at path: [any CodingKey], list: String = "windows") throws
    {
        var owner = [Int](repeating: -1, count: 7 * 1_440)
        for (index, window) in windows.enumerated() {
            for day in window.days.sorted() {
                for minute in 0..<1_440 where window.contains(weekday: day, minute: minute) {
                    let earlier = owner[day * 1_440 + minute]
                    guard earlier < 0 else {
                        throw mistake(
                            "overlaps \(list)[\(earlier)] on \(weekdayNames[day]) at "
                                + "\(Self.clock(minute)); windows may not overlap",
                            at: path + [IndexKey(index)])
                    }
                    owner[day * 1_440 + minute] = index
                }
            }
        }
    }

    static let weekdayNames = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]

    /// `minute` of the day as `HH:MM`.
    static func clock(_ minute: Int) -> String {
        let hour = minute / 60
        let rest = minute % 60
        return (hour < 10 ? "0" : "") + "\(hour):" + (rest < 10 ? "0" : "") + "\(rest)"
    }

    static func mistake(_ message: String, at path: [any CodingKey]) -> DecodingError {
        .dataCorrupted(DecodingError.Context(codingPath: path, debugDescription: message))
    }

    /// An array element's place in a coding path.
    struct IndexKey: CodingKey {
        var intValue: Int?
        var stringValue: String { "Index \(intValue ?? 0)" }
        init(_ index: Int) { intValue = index }
        init?(stringValue: String) { nil }
        init?(intValue: Int) { self.intValue = intValue }
    }

    /// A field holding one text or a list of them, each with its coding path.
    static func texts<Key: CodingKey>(_ fields: KeyedDecodingContainer<Key>, _ key: Key) throws
        -> [(text: String, path: [any CodingKey])]
    {
        guard fields.contains(key) else { return [] }
        let path = fields.codingPath + [key]
        if let one = try? fields.decode(String.self, forKey: key) { return [(one, path)] }
        let list = try fields.decode([String].self, forKey: key)
        return list.enumerated().map { ($0.element, path + [IndexKey($0.offset)]) }
    }

    /// `HH:MM-HH:MM`, each time from 00:00 to 24:00 (24:00 only as an end).
    static func hours(_ text: String, at path: [any CodingKey]) throws -> Hours {
        let expected = "expected HH:MM-HH:MM, times from 00:00 to 24:00"
        guard let match = text.wholeMatch(of: /(\d\d):(\d\d)-(\d\d):(\d\d)/) else {
            throw mistake("\"\(text)\" is not a span of hours (\(expected))", at: path)
        }
        func minute(_ hour: Substring, _ minute: Substring, end: Bool) throws -> Int {
            let value = (Int(hour) ?? 99) * 60 + (Int(minute) ?? 99)
            guard (Int(minute) ?? 99) < 60, value < 1_440 || (end && value == 1_440) else {
                throw mistake("\(hour):\(minute) is not a time of day (\(expected))", at: path)
            }
            return value
        }
        return Hours(
            start: try minute(match.1, match.2, end: false), end: try minute(match.3, match.4, end: true))
    }

    /// `mon`, `monday`, a range `mon-fri` (which may wrap: `fri-mon`), as weekdays 0 = Sunday … 6.
    static func days(_ text: String, at path: [any CodingKey]) throws -> Set<Int> {
        func day(_ name: Substring) throws -> Int {
            let name = name.lowercased()
            guard name.count >= 3,
                let index = weekdayNames.firstIndex(where: { $0.lowercased().hasPrefix(name) })
            else {
                throw mistake(
                    "\"\(name)\" is not a weekday (expected sun, mon, tue, wed, thu, fri, sat, or a range like mon-fri)",
                    at: path)
            }
            return index
        }
        let ends = text.split(separator: "-", omittingEmptySubsequences: false)
        guard ends.count <= 2 else {
            throw mistake("\"\(text)\" is not a weekday or a range like mon-fri", at: path)
        }
        let first = try day(ends[0])
        let last = try ends.count == 2 ? day(ends[1]) : first
        var days: Set<Int> = [first]
        var next = first
        while next != last {
            next = (next + 1) % 7
            days.insert(next)
        }
        return days
    }
}

extension PriceWindows.Window: Decodable {
    private enum CodingKeys: String, CodingKey {
        case name, days, hours
    }

    init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        name = try fields.decodeIfPresent(String.self, forKey: .name) ?? "off-peak"
        let days = try PriceWindows.texts(fields, .days)
        self.days =
            days.isEmpty
            ? Set(0..<7)
            : try days.reduce(into: []) { $0.formUnion(try PriceWindows.days($1.text, at: $1.path)) }
        hours = try PriceWindows.texts(fields, .hours).map { try PriceWindows.hours($0.text, at: $0.path) }
        prices = try PriceWindows.Prices(from: decoder)
        guard prices != PriceWindows.Prices() else {
            throw PriceWindows.mistake(
                "a window gives no prices (expected factor, input_cost_per_token, output_cost_per_token "
                    + "or cache_read_input_token_cost)", at: fields.codingPath)
        }
    }
}

/// LiteLLM's `off_peak_pricing`: `hours_utc` (one `HH:MM-HH:MM` or a list) every day in UTC, at the
/// prices it gives; the rest of the day is `standard`.
struct OffPeakPricing: Sendable, Equatable, Decodable {
    var windows: PriceWindows

    private enum CodingKeys: String, CodingKey {
        case hoursUTC = "hours_utc"
    }

    init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        let hours = try PriceWindows.texts(fields, .hoursUTC).map {
            try PriceWindows.hours($0.text, at: $0.path)
        }
        guard !hours.isEmpty else {
            throw PriceWindows.mistake(
                "hours_utc is missing (expected \"HH:MM-HH:MM\" or a list of them)", at: fields.codingPath)
        }
        let utc = TimeZone(identifier: "UTC") ?? .gmt
        // Each span its own window, so spans that overlap are found as windows are.
        let spans = hours.map {
            PriceWindows.Window(name: "off-peak", days: Set(0..<7), hours: [$0], prices: .init())
        }
        try PriceWindows.checkOverlaps(
            spans, at: fields.codingPath + [CodingKeys.hoursUTC], list: "hours_utc")
        let window = PriceWindows.Window(
            name: "off-peak", days: Set(0..<7), hours: hours, prices: try PriceWindows.Prices(from: decoder))
        windows = PriceWindows(
            timeZone: utc, weekdayTimeZone: utc, outside: "standard", windows: [window], source: nil)
    }
}
