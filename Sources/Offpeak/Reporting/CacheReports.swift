import Foundation

/// What `offpeak cache stats` shows: entries, size, hits and misses, and the dollars saved.
public struct CacheStatsReport: Sendable, Encodable {
    var entries, expiredEntries, rawBytes, storedBytes: Int
    var compressionRatio: Double?
    var hitsToday, missesToday, hitsTotal, missesTotal: Int
    var savedDollarsToday, savedDollarsTotal: Double
    var oldest, newest: Date?

    public init(_ stats: CacheStats) {
        entries = stats.entries
        expiredEntries = stats.expiredEntries
        rawBytes = stats.rawBytes
        storedBytes = stats.storedBytes
        compressionRatio = stats.compressionRatio
        hitsToday = stats.hitsToday
        missesToday = stats.missesToday
        hitsTotal = stats.hitsTotal
        missesTotal = stats.missesTotal
        savedDollarsToday = stats.savedDollarsToday
        savedDollarsTotal = stats.savedDollarsTotal
        oldest = stats.oldest
        newest = stats.newest
    }

    public var text: String {
        let ratio = compressionRatio.map { String(format: " (%.2fx)", $0) } ?? ""
        return """
            entries: \(entries) (\(expiredEntries) expired)
            size:    \(ReportFormat.bytes(rawBytes)) raw, \(ReportFormat.bytes(storedBytes)) compressed\(ratio)
            hits:    \(hitsToday) today, \(hitsTotal) in all
            misses:  \(missesToday) today, \(missesTotal) in all
            saved:   $\(Money.format(savedDollarsToday)) today, $\(Money.format(savedDollarsTotal)) in all
            oldest:  \(oldest.map(ReportFormat.date) ?? "-")
            newest:  \(newest.map(ReportFormat.date) ?? "-")

            """
    }
}

/// What `offpeak cache ls` shows: entries, most recently used first.
public struct CacheListReport: Sendable, Encodable {
    var entries: [CacheEntrySummary]
    /// When the list was read: expiry is shown relative to it.
    var now: Date

    public init(entries: [CacheEntrySummary], now: Date) {
        self.entries = entries
        self.now = now
    }

    /// The entries alone, as `--json` has always printed them.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(entries)
    }

    public var text: String {
        let table = TextTable(columns: ["KEY", "KIND", "JOB", "MODEL/URL", "SIZE", "HITS", "EXPIRES"])
        for entry in entries {
            table.add([
                String(entry.key.prefix(16)), entry.kind.rawValue, entry.job ?? "-",
                entry.model ?? entry.url ?? "-",
                ReportFormat.bytes(entry.storedBytes), String(entry.hits),
                ReportFormat.relative(entry.expiresAt, now: now),
            ])
        }
        return table.render()
    }
}

/// What `offpeak cache show KEY` shows: one entry's facts and its payload.
public struct CacheEntryReport: Sendable, Encodable {
    var entry: CacheEntrySummary
    var payload: JSONText
    let now: Date

    init(entry: CacheEntrySummary, payload: String, now: Date) {
        self.entry = entry
        self.payload = JSONText(text: payload)
        self.now = now
    }

    enum CodingKeys: String, CodingKey { case entry, payload }

    /// The entry whose key is `key` or starts with it.
    /// - Throws: a data error (65) when there is none, a usage error when the prefix is ambiguous.
    public static func find(_ key: String, in cache: ResponseCache, now: Date = Date()) throws(OffpeakError)
        -> CacheEntryReport
    {
        guard let (summary, payload) = try cache.entry(key: key, now: now) else {
            let hint =
                key.count < ResponseCache.minKeyPrefix
                ? " (give at least \(ResponseCache.minKeyPrefix) characters of it)" : ""
            throw OffpeakError(.dataError, "no cache entry with key \(key)\(hint)")
        }
        return CacheEntryReport(entry: summary, payload: payload, now: now)
    }

    public var text: String {
        let table = TextTable(columns: ["", ""])
        let expires =
            "\(ReportFormat.date(entry.expiresAt)) (\(ReportFormat.relative(entry.expiresAt, now: now)))"
        let size =
            "\(ReportFormat.bytes(entry.rawBytes)) raw, \(ReportFormat.bytes(entry.storedBytes)) stored"
        for (name, value) in [
            ("key", entry.key), ("kind", entry.kind.rawValue), ("job", entry.job ?? "-"),
            ("provider", entry.provider ?? "-"), ("model", entry.model ?? "-"), ("url", entry.url ?? "-"),
            ("created", ReportFormat.date(entry.createdAt)), ("expires", expires),
            ("last used", ReportFormat.date(entry.lastAccessAt)), ("hits", String(entry.hits)),
            ("size", size),
        ] {
            table.add([name + ":", value])
        }
        // The table without its (empty) header line, then the payload.
        return String(table.render().drop { $0 != "\n" }.dropFirst()) + payload.pretty + "\n"
    }
}
