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

/// Byte sizes for `cache.max_bytes`: `1048576`, `256MB`, `256 MiB`, `2GB`, `1TiB`.
///
/// KB/MB/GB/TB are 1024-based here, as most users mean them for a disk cache; KiB/MiB/GiB/TiB say
/// the same thing explicitly.
enum ByteSizeParser {
    private static let units: [String: Int] = [
        "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
        "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40,
    ]

    /// A bound as a user would write it: `1TiB`, `256MiB`, `1000 bytes`.
    static func text(_ bytes: Int) -> String {
        for (unit, shift) in [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)]
        where bytes >= 1 << shift && bytes % (1 << shift) == 0 {
            return "\(bytes >> shift)\(unit)"
        }
        return "\(bytes) bytes"
    }

    /// Bytes, or `nil` when `text` is not a size.
    static func bytes(_ text: String) -> Int? {
        let text = text.trimmingCharacters(in: .whitespaces)
        let digits = text.prefix { $0.isASCIIDigit }
        let unit = text.dropFirst(digits.count).trimmingCharacters(in: .whitespaces).lowercased()
        guard let amount = Int(digits) else { return nil }
        guard !unit.isEmpty else { return amount }
        guard let scale = units[unit] else { return nil }
        let (bytes, overflow) = amount.multipliedReportingOverflow(by: scale)
        return overflow ? nil : bytes
    }
}

extension Character {
    /// `0`...`9` only: `Character.isNumber` also accepts other scripts' digits and fractions.
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
