import Foundation

/// The value formats of rate-limit headers, each read to `nil` rather than failing.
extension RateLimitHeaders {
    /// A count: a whole number, at least 0 (Azure sends `-1` for "no limit reported").
    static func count(_ text: String) -> Int? {
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), value >= 0 else { return nil }
        return value
    }

    /// An RFC 3339 time (`2025-08-21T12:40:59Z`, fractions and offsets allowed), no later than
    /// `longestWait` after `now`.
    static func time(rfc3339 text: String, now: Date) -> Date? {
        let text = text.trimmingCharacters(in: .whitespaces)
        let date =
            (try? Date(text, strategy: Date.ISO8601FormatStyle()))
            ?? (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        return date.map { min($0, now.addingTimeInterval(longestWait)) }
    }

    /// Seconds in a Go duration as OpenAI writes resets (`1s`, `6m0s`, `20ms`, `1h2m3.5s`, `250us`),
    /// or a bare number of seconds as some compatible servers send; at most `longestWait`.
    static func seconds(goDuration text: String) -> TimeInterval? {
        let text = text.trimmingCharacters(in: .whitespaces)
        if let bare = Double(text) { return bare.isFinite && bare >= 0 ? min(bare, longestWait) : nil }
        let units: [String: Double] = [
            "h": 3_600, "m": 60, "s": 1, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ns": 1e-9,
        ]
        func isNumeral(_ character: Character) -> Bool { ("0"..."9").contains(character) || character == "." }
        var total = 0.0
        var rest = Substring(text)
        while !rest.isEmpty {
            let number = rest.prefix(while: isNumeral)
            let unit = rest.dropFirst(number.count).prefix { !isNumeral($0) }
            guard let amount = Double(number), let scale = units[String(unit)] else { return nil }
            total += amount * scale
            rest = rest.dropFirst(number.count + unit.count)
        }
        return text.isEmpty || !total.isFinite ? nil : min(total, longestWait)
    }
}
