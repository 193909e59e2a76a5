import Foundation

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
