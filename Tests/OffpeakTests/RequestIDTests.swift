import Foundation
import Testing

@testable import Offpeak

/// Request ids (`RequestRecord.newID`): made in time order, so a submit's inserts land at the end
/// of the indexes on them, and apart within one millisecond.
struct RequestIDTests {
    @Test func idsSortByTheMillisecondTheyWereMadeIn() {
        // Half a millisecond in, so no step lands on a millisecond's edge.
        let start = Date(timeIntervalSince1970: 1_795_000_000.1255)
        let ids = (0..<1000).map { RequestRecord.newID(at: start + Double($0) * 0.002) }
        #expect(ids == ids.sorted())
        #expect(Set(ids.map { $0.count }) == [25])
        #expect(ids.allSatisfy { $0.hasPrefix("r") && $0.dropFirst().allSatisfy(\.isHexDigit) })
        // The milliseconds, then the random part.
        #expect(ids[0].hasPrefix("r" + String(1_795_000_000_125, radix: 16).leftPadded(to: 11)))
    }

    @Test func idsMadeInOneMillisecondDiffer() {
        let now = Date()
        let ids = (0..<10_000).map { _ in RequestRecord.newID(at: now) }
        #expect(Set(ids).count == ids.count)
        #expect(Set(ids.map { $0.prefix(12) }).count == 1)
    }
}
