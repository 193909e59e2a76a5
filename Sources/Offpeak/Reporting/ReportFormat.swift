import Foundation

/// How reports print sizes and times (the cache, batches, the store).
enum ReportFormat {
    /// A byte count in decimal units: "512 B", "3.4 KB", "120 MB".
    static func bytes(_ count: Int) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(count)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0
            ? "\(count) B" : String(format: value < 10 ? "%.1f" : "%.0f", value) + " " + units[unit]
    }

    /// Local time, to the minute.
    static func date(_ date: Date) -> String {
        let style = Date.ISO8601FormatStyle(dateTimeSeparator: .space, timeZone: .current)
        return String(date.formatted(style).prefix(16))
    }

    /// "in 23 h" or "2 h ago".
    static func relative(_ date: Date, now: Date) -> String {
        let seconds = Int(date.timeIntervalSince(now).rounded())
        let span = abs(seconds)
        let text =
            span < 60
            ? "\(span) s"
            : span < 3600 ? "\(span / 60) min" : span < 86_400 ? "\(span / 3600) h" : "\(span / 86_400) d"
        return seconds >= 0 ? "in \(text)" : "\(text) ago"
    }
}
