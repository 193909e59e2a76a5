import Foundation
import Testing

@testable import Offpeak

/// `FeedDate`: the RFC 822 and RFC 3339 dates feeds write, in the variants found in the wild.
struct FeedDateTests {
    /// 2006-01-02T15:04:05Z.
    let instant = Date(timeIntervalSince1970: 1_136_214_245)

    @Test func readsRFC822Variants() {
        let same = [
            "Mon, 02 Jan 2006 15:04:05 GMT", "Mon, 02 Jan 2006 15:04:05 +0000", "02 Jan 2006 15:04:05 UT",
            "Mon, 2 Jan 2006 08:04:05 -0700", "Mon, 02 Jan 2006 10:04:05 EST", "Mon, 02 Jan 06 15:04:05 Z",
            "Monday, 02 January 2006 15:04:05 GMT", "Mon, 02 Jan 2006 15:04:05",
            "Mon, 02 Jan 2006 17:04:05 +02:00",
            "  Mon, 02 Jan 2006 15:04:05 GMT\n", "Mon, 02 Jan 2006 15:04:05 A",
        ]
        for text in same { #expect(FeedDate.rfc822(text) == instant, "\(text)") }
        #expect(FeedDate.rfc822("Mon, 02 Jan 2006 15:04 GMT") == instant.addingTimeInterval(-5))
        #expect(
            FeedDate.rfc822("Sat, 29 Feb 2020 00:00:00 GMT") == Date(timeIntervalSince1970: 1_582_934_400))
    }

    @Test func rejectsBadRFC822Dates() {
        let bad = [
            "", "yesterday", "Mon, 31 Jun 2006 15:04:05 GMT", "Mon, 02 Foo 2006 15:04:05 GMT",
            "Mon, 02 Jan 2006 25:04:05 GMT", "Mon, 02 Jan 2006 15:04:05 +99", "Mon, 02 Jan 2006",
            "Thu, 29 Feb 2007 00:00:00 GMT",
        ]
        for text in bad { #expect(FeedDate.rfc822(text) == nil, "\(text)") }
    }

    @Test func readsRFC3339Variants() {
        let same = [
            "2006-01-02T15:04:05Z", "2006-01-02t15:04:05z", "2006-01-02 15:04:05Z",
            "2006-01-02T17:04:05+02:00",
            "2006-01-02T10:04:05-0500", "2006-01-02T15:04:05", " 2006-01-02T15:04:05Z\n",
        ]
        for text in same { #expect(FeedDate.rfc3339(text) == instant, "\(text)") }
        #expect(FeedDate.rfc3339("2006-01-02T15:04:05.250Z") == instant.addingTimeInterval(0.25))
        #expect(FeedDate.rfc3339("2006-01-02T15:04Z") == instant.addingTimeInterval(-5))
        #expect(FeedDate.rfc3339("2006-01-02") == Date(timeIntervalSince1970: 1_136_160_000))
        #expect(FeedDate.rfc3339("1969-12-31T23:59:59Z") == Date(timeIntervalSince1970: -1))
    }

    @Test func rejectsBadRFC3339Dates() {
        let bad = [
            "", "2006-13-02T15:04:05Z", "2006-01-32", "2006-1-2", "2006-01-02T15:04:05 Z",
            "2006-01-02T15:04:05.Z",
            "2006-01-02T15:04:05+25:00", "Mon, 02 Jan 2006 15:04:05 GMT", "2006-01-02X15:04:05Z",
        ]
        for text in bad { #expect(FeedDate.rfc3339(text) == nil, "\(text)") }
    }
}
