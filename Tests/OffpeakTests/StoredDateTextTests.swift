import Foundation
import GRDB
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// The hand-written text of a date, against GRDB's own (what the store holds and a lookup
/// compares with).
@Suite(.ownThreads) struct StoredDateTextTests {
    static func text(_ date: Date) -> String { StoredDateText.string(date) }

    static func grdb(_ date: Date) -> String? { String.fromDatabaseValue(date.databaseValue) }

    @Test func theTextIsGRDBs() {
        var dates = [
            Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: -0.0005),
            Date(timeIntervalSince1970: 951_782_400), Date(timeIntervalSince1970: 951_868_799.999),
            Date(timeIntervalSince1970: -2_203_891_200), Date(timeIntervalSince1970: 1_760_000_000.9995),
            StoredDate.earliest, StoredDate.latest, StoredDate.latest + 0.999, Date(),
        ]
        var generator = SystemRandomNumberGenerator()
        let span = StoredDateText.earliest.timeIntervalSince1970...StoredDate.latest.timeIntervalSince1970
        for _ in 0..<5_000 {
            dates.append(Date(timeIntervalSince1970: Double.random(in: span, using: &generator)))
            dates.append(Date(timeIntervalSince1970: Double.random(in: 0...4_000_000_000, using: &generator)))
        }
        for date in dates {
            #expect(Self.text(date) == Self.grdb(date), "\(date.timeIntervalSince1970)")
        }
    }

    @Test func datesBefore1583OrPast9999AreFormattedByGRDB() {
        for date in [
            Date(timeIntervalSince1970: 300_000_000_000), StoredDateText.earliest - 0.001,
            Date(timeIntervalSince1970: -38_000_000_000),
        ] {
            #expect(Self.text(date) == Self.grdb(date))
        }
    }

    /// An entry expiring at t is fresh until t, to the millisecond, and not at t.
    @Test func freshnessTurnsAtTheExpiry() throws {
        let workspace = try TemporaryWorkspace()
        let store = try Store.open(Workspace(root: workspace.root))
        let cache = ResponseCache(store: store, maxBytes: 1 << 30, logger: Logger(label: "test"))
        let t0 = ResponseCacheTests.t0
        try cache.save(
            answers: [(ResponseCacheTests.key(1), ResponseCacheTests.answer(1))], job: "j", provider: "sim",
            ttl: 100, now: t0)
        let key = ResponseCacheTests.key(1)
        #expect(try cache.peekAnswer(for: key, now: t0 + 99.999) != nil)
        #expect(try cache.peekAnswer(for: key, now: t0 + 100) == nil)
        #expect(try cache.peekAnswer(for: key, now: t0 + 100.0005) == nil)
        #expect(try cache.peekAnswer(for: key, now: t0 - 86_400 * 365 * 30) != nil)
    }
}

/// GRDB's snake_case conversions, done once per name (`ColumnNames`), against Foundation's, which
/// GRDB copies.
@Suite(.ownThreads) struct ColumnNamesTests {
    private struct Keys: Encodable, Decodable {
        let names: [String]
        struct Key: CodingKey {
            let stringValue: String
            init(stringValue: String) { self.stringValue = stringValue }
            var intValue: Int? { nil }
            init?(intValue: Int) { nil }
        }
        init(names: [String]) { self.names = names }
        init(from decoder: any Decoder) throws {
            names = try decoder.container(keyedBy: Key.self).allKeys.map(\.stringValue)
        }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            for name in names { try container.encode(0, forKey: Key(stringValue: name)) }
        }
    }

    static let names = [
        "requestId", "runId", "finishReason", "fromCache", "cacheReadTokens", "url", "sourceURLText",
        "myURLProperty", "retry2After", "lastAccessAt", "a", "expiresAt", "httpStatus", "ledgerID",
    ]

    @Test func keysBecomeFoundationsSnakeCase() throws {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let json = try JSONSerialization.jsonObject(with: try encoder.encode(Keys(names: Self.names)))
        let expected = Set(((json as? [String: Int]) ?? [:]).keys)
        #expect(Set(Self.names.map { ColumnNames.column(forKey: Keys.Key(stringValue: $0)) }) == expected)
        #expect(ColumnNames.snakeCase("requestId") == "request_id")
        #expect(ColumnNames.snakeCase("sourceURLText") == "source_url_text")
    }

    @Test func columnsBecomeFoundationsCamelCase() throws {
        let columns = Self.names.map(ColumnNames.snakeCase) + ["_private", "trailing_", "one", "two__words"]
        let object = Dictionary(uniqueKeysWithValues: columns.map { ($0, 0) })
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let keys = try decoder.decode(Keys.self, from: try JSONSerialization.data(withJSONObject: object))
            .names
        #expect(Set(columns.map { ColumnNames.key(forColumn: $0).stringValue }) == Set(keys))
        #expect(ColumnNames.camelCase("cache_read_tokens") == "cacheReadTokens")
    }
}
