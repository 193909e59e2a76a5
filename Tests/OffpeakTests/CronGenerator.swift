import Foundation

@testable import OffpeakSimKit

/// Deterministic random cron expressions and instants, for comparing against croniter.
struct CronGenerator {
    private var random: SplitMix64
    /// Whether the last expression holds a range written `a-a`, which croniter reads as the whole cycle.
    private(set) var madeEqualRange = false

    init(seed: UInt64) {
        random = SplitMix64(seed: seed)
    }

    mutating func next() -> UInt64 { random.next() }

    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }

    mutating func pick<T>(_ values: [T]) -> T {
        values[int(0...(values.count - 1))]
    }

    static let macros = ["@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually"]
    static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    static let weekdays = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]

    mutating func expression() -> String {
        madeEqualRange = false
        if int(0...99) < 3 { return pick(Self.macros) }
        return [
            field(0...59, names: []), field(0...23, names: []), field(1...31, names: []),
            field(1...12, names: Self.months), field(0...7, names: Self.weekdays),
        ].joined(separator: " ")
    }

    /// One field: mostly `*`, else a value, range, step or list of them.
    mutating func field(_ bounds: ClosedRange<Int>, names: [String]) -> String {
        switch int(0...99) {
        case 0..<40: return "*"
        case 40..<50: return "*/\(int(1...max(1, bounds.count / 2)))"
        case 50..<80: return element(bounds, names: names)
        default: return (0..<int(2...3)).map { _ in element(bounds, names: names) }.joined(separator: ",")
        }
    }

    private mutating func element(_ bounds: ClosedRange<Int>, names: [String]) -> String {
        let step = int(1...max(1, bounds.count / 3))
        switch int(0...99) {
        case 0..<40: return value(int(bounds), bounds: bounds, names: names)
        case 40..<85:
            // Mostly low < high; now and then low == high, which is excluded from the comparison.
            let low = int(bounds.lowerBound...(bounds.upperBound - 1))
            let high = int(0...99) == 0 ? low : int((low + 1)...bounds.upperBound)
            if high == low { madeEqualRange = true }
            let range =
                value(low, bounds: bounds, names: names) + "-" + value(high, bounds: bounds, names: names)
            return int(0...1) == 0 ? range : range + "/\(step)"
        default: return value(int(bounds), bounds: bounds, names: names) + "/\(step)"
        }
    }

    /// A number, or (a third of the time) its name in random case.
    private mutating func value(_ number: Int, bounds: ClosedRange<Int>, names: [String]) -> String {
        let index = number - (names.count == 12 ? 1 : 0)
        guard !names.isEmpty, index < names.count, int(0...2) == 0 else { return String(number) }
        return String(names[index].map { int(0...1) == 0 ? Character($0.uppercased()) : $0 })
    }

    /// Three instants: one anywhere in 2015–2030, two within three hours of a clock change in `zone`
    /// (or anywhere, in zones without one). Half are whole minutes, to hit fire times exactly.
    mutating func instants(near zone: String) -> [Int] {
        let timeZone = TimeZone(identifier: zone) ?? .gmt
        var instants = [anyInstant()]
        for _ in 0..<2 {
            let start = Date(timeIntervalSince1970: TimeInterval(anyInstant()))
            if let change = timeZone.nextDaylightSavingTimeTransition(after: start),
                change.timeIntervalSince1970 < 1_924_992_000
            {
                instants.append(Int(change.timeIntervalSince1970) + int(-10_800...10_800))
            } else {
                instants.append(anyInstant())
            }
        }
        return instants.map { int(0...1) == 0 ? $0 - (($0 % 60) + 60) % 60 : $0 }
    }

    private mutating func anyInstant() -> Int {
        int(1_420_070_400...1_924_991_999)  // 2015-01-01 ..< 2031-01-01
    }
}
