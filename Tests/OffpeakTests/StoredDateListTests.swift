import Foundation
import Testing

@testable import Offpeak

/// The records that list their dates for `StoredDate.check` (`ListsStoredDates`) list each of them:
/// a date property added and not listed would be written unchecked.
struct StoredDateListTests {
    /// The dates reflection finds in `record`, in declaration order, a nil one as nil.
    func reflectedDates(_ record: Any) -> [Date?] {
        Mirror(reflecting: record).children.compactMap { child -> Date?? in
            if type(of: child.value) == Date.self { return .some(child.value as? Date) }
            if type(of: child.value) == Date?.self { return .some(child.value as? Date) }
            return nil
        }
    }

    @Test func eachListHoldsEveryDateReflectionFinds() {
        var run = StoreTests.run("r-1", job: "j")
        run.startedAt = Date(timeIntervalSince1970: 1)
        run.deadlineAt = Date(timeIntervalSince1970: 2)
        let result = ResultRecord(
            requestId: "q", runId: "r-1", text: "", finishReason: "end_turn", model: "m", fromCache: false,
            ledgerId: nil, inputTokens: 0, outputTokens: 0, dollars: 0,
            createdAt: Date(timeIntervalSince1970: 3))
        let entry = CacheEntryRecord(
            key: "k", kind: .answer, job: "j", provider: "sim", model: "m", url: nil,
            createdAt: Date(timeIntervalSince1970: 4), expiresAt: Date(timeIntervalSince1970: 5),
            lastAccessAt: Date(timeIntervalSince1970: 6), hits: 0, rawBytes: 0, storedBytes: 0,
            payload: Data())
        let records: [any ListsStoredDates] = [
            run, result, entry, LedgerStoreRoleTests.call(run: "r-1", at: Date(timeIntervalSince1970: 7)),
        ]
        for record in records {
            #expect(record.storedDates == reflectedDates(record), "\(type(of: record))")
        }
    }

    @Test func aListedRecordWithABadDateIsStillRefusedByName() {
        var run = StoreTests.run("far-1", job: "far")
        run.finishedAt = Date(timeIntervalSince1970: .nan)
        let error = #expect(throws: OffpeakError.self) { try StoredDate.check(run) }
        #expect(
            error?.description
                == "cannot store runs row far-1: finished_at is not a date (nan); the store holds dates from year 1 to 9999"
        )
    }
}
