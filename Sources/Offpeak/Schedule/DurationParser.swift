import Foundation

/// Durations as people write them in specs: `90s`, `10m`, `24h`, `7d`, `1h30m`, or bare seconds.
///
/// Kept strict (whole numbers, no spaces inside, each unit at most once) so that a typo
/// like `1hr` is an error the user sees, not a silently different TTL.
public enum DurationParser {
    private static let units: [Character: Int] = ["d": 86_400, "h": 3_600, "m": 60, "s": 1]

    /// Seconds, or `nil` when `text` is not a duration. `0`, `0s` are valid; negatives are not.
    public static func seconds(_ text: String) -> TimeInterval? {
        let text = text.trimmingCharacters(in: .whitespaces)
        if let bare = Int(text), bare >= 0, text.allSatisfy(\.isASCIIDigit) { return TimeInterval(bare) }
        var total = 0
        var digits = ""
        var seen: Set<Character> = []
        for character in text {
            if character.isASCIIDigit {
                digits.append(character)
                continue
            }
            guard let unit = units[character], !digits.isEmpty, !seen.contains(character),
                let amount = Int(digits)
            else { return nil }
            let (product, overflowA) = amount.multipliedReportingOverflow(by: unit)
            let (sum, overflowB) = total.addingReportingOverflow(product)
            guard !overflowA, !overflowB else { return nil }
            total = sum
            seen.insert(character)
            digits = ""
        }
        guard digits.isEmpty, !seen.isEmpty else { return nil }
        return TimeInterval(total)
    }

    /// A bound as a user would write it: `3650d (10 years)`, `24h`, `1h`, `90s`.
    static func text(_ seconds: TimeInterval) -> String {
        let whole = Int(seconds)
        let year = 365 * 86_400
        if whole > 86_400, whole % 86_400 == 0 {
            let days = "\(whole / 86_400)d"
            return whole % year == 0 ? "\(days) (\(whole / year) year\(whole == year ? "" : "s"))" : days
        }
        for (unit, size) in [("h", 3_600), ("m", 60)] where whole % size == 0 && whole >= size {
            return "\(whole / size)\(unit)"
        }
        return "\(whole)s"
    }
}
