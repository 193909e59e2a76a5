import Foundation

/// The dates the store can hold. GRDB writes a date as text, "yyyy-MM-dd HH:mm:ss.SSS" in UTC, and
/// reads back only four-digit years: a date past 9999 (a run created with `deadline: 3000000d`) is
/// written without complaint, and from then on every read of its row fails. So no record is
/// written with such a date (`StoredRecord.willSave`), and reads that list rows skip one that does
/// not decode (`UnreadableRun`).
enum StoredDate {
    /// 0001-01-01T00:00:00Z.
    static let earliest = Date(timeIntervalSince1970: -62_135_596_800)
    /// 9999-12-31T23:59:59Z.
    static let latest = Date(timeIntervalSince1970: 253_402_300_799)

    /// Whether `date` reads back as written (false for NaN and infinities too).
    static func isStorable(_ date: Date) -> Bool {
        // Spelled with `<` alone: `Date`'s `>=` is "not `<`", which a NaN passes.
        !(date.timeIntervalSinceReferenceDate.isNaN || date < earliest || latest < date)
    }

    /// Refuses a record holding a date the store could not read back, naming its table, row and
    /// column, before anything of it is written.
    static func check<Record: StoredRecord>(_ record: Record) throws(OffpeakError) {
        // The records a call commits list their dates: reflecting on each of them cost more than
        // the rest of its commit's encoding. Only a bad date goes on to find its column's name.
        if let listed = record as? any ListsStoredDates,
            listed.storedDates.allSatisfy({ $0.map(isStorable) ?? true })
        {
            return
        }
        var id: String?
        for child in Mirror(reflecting: record).children {
            if child.label == "id" || child.label == "key", let text = child.value as? String { id = text }
            guard let date = child.value as? Date, !isStorable(date), let label = child.label else {
                continue
            }
            let row = id.map { " row \($0)" } ?? ""
            throw OffpeakError(
                .dataError,
                "cannot store \(Record.databaseTableName)\(row): \(column(label)) is \(describe(date)); "
                    + "the store holds dates from year 1 to 9999")
        }
    }

    /// "year 10240", or what the value is when it has no year.
    static func describe(_ date: Date) -> String {
        guard date.timeIntervalSince1970.isFinite else { return "not a date (\(date.timeIntervalSince1970))" }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let components = calendar.dateComponents([.era, .year], from: date)
        let year = components.year ?? 0
        return components.era == 0 ? "in year \(year) BC" : "in year \(year)"
    }

    /// `deadlineAt` → `deadline_at`, as `StoredRecord` maps properties to columns.
    static func column(_ property: String) -> String {
        var name = ""
        for character in property {
            if character.isUppercase {
                name += "_" + character.lowercased()
            } else {
                name.append(character)
            }
        }
        return name
    }
}

/// A record that lists its dates, so `StoredDate.check` need not reflect on it to find them.
/// `StoredDateListTests` holds each list to what reflection finds.
protocol ListsStoredDates {
    /// Every `Date` property's value, a nil one as nil.
    var storedDates: [Date?] { get }
}

extension ResultRecord: ListsStoredDates {
    var storedDates: [Date?] { [createdAt] }
}

extension LedgerEntry: ListsStoredDates {
    var storedDates: [Date?] { [at] }
}

extension RunRecord: ListsStoredDates {
    var storedDates: [Date?] { [createdAt, startedAt, updatedAt, finishedAt, deadlineAt] }
}

extension CacheEntryRecord: ListsStoredDates {
    var storedDates: [Date?] { [createdAt, expiresAt, lastAccessAt] }
}
