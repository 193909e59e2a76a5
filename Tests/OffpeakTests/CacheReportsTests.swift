import Foundation
import Testing

@testable import Offpeak

/// What `cache stats`, `cache ls` and `cache show` print, rendered by the library (the CLI only
/// prints it), at a fixed time in UTC.
struct CacheReportsTests {
    static let now = Date(timeIntervalSince1970: 1_760_000_000)  // 2025-10-09T08:53:20Z

    static let entry = CacheEntrySummary(
        key: "3f9c0a1b2c3d4e5f60718293a4b5c6d7e8f9", kind: .answer, job: "digest", provider: "sim",
        model: "claude-haiku-4-5", url: nil, createdAt: now - 7200, expiresAt: now + 23 * 3600,
        lastAccessAt: now - 60, hits: 3, rawBytes: 2_048, storedBytes: 1_500_000, expired: false)

    @Test func statsReadAsBefore() {
        let stats = CacheStats(
            entries: 12, expiredEntries: 2, rawBytes: 24_576, storedBytes: 12_288, hitsToday: 5,
            missesToday: 1,
            hitsTotal: 40, missesTotal: 12, savedDollarsToday: 0.0123, savedDollarsTotal: 1.5, oldest: nil,
            newest: nil)
        #expect(
            CacheStatsReport(stats).text == """
                entries: 12 (2 expired)
                size:    25 KB raw, 12 KB compressed (2.00x)
                hits:    5 today, 40 in all
                misses:  1 today, 12 in all
                saved:   $0.0123 today, $1.50 in all
                oldest:  -
                newest:  -

                """)
    }

    @Test func aListShowsKeysAndExpiryRelativeToNow() {
        let report = CacheListReport(entries: [Self.entry], now: Self.now)
        #expect(
            report.text == """
                KEY               KIND    JOB     MODEL/URL         SIZE    HITS  EXPIRES
                3f9c0a1b2c3d4e5f  answer  digest  claude-haiku-4-5  1.5 MB  3     in 23 h

                """)
    }

    @Test func anEntryShowsItsFactsThenItsPayloadIndented() {
        let report = CacheEntryReport(
            entry: Self.entry, payload: #"{"text":"kept","model":"m"}"#, now: Self.now)
        let lines = report.text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "key:        3f9c0a1b2c3d4e5f60718293a4b5c6d7e8f9")
        #expect(lines.contains("hits:       3"))
        #expect(lines.contains("size:       2.0 KB raw, 1.5 MB stored"))
        #expect(report.text.hasSuffix("{\n  \"model\" : \"m\",\n  \"text\" : \"kept\"\n}\n"))
    }

    @Test func sizesAndSpansReadLikeAPersonWritesThem() {
        #expect(ReportFormat.bytes(999) == "999 B")
        #expect(ReportFormat.bytes(1_000) == "1.0 KB")
        #expect(ReportFormat.bytes(25_000_000) == "25 MB")
        #expect(ReportFormat.relative(Self.now - 90, now: Self.now) == "1 min ago")
        #expect(ReportFormat.relative(Self.now + 3 * 86_400, now: Self.now) == "in 3 d")
    }
}
