import Foundation
import GRDB
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// The TTL cache on a real SQLite file per test, through the real migrator.
@Suite(.ownThreads) struct ResponseCacheTests {
    /// A whole second, so dates survive the store and the payload's milliseconds exactly.
    static let t0 = Date(timeIntervalSince1970: 1_760_000_000)

    let workspace: TemporaryWorkspace
    let store: Store

    init() throws {
        workspace = try TemporaryWorkspace()
        store = try workspace.openStore()
    }

    func cache(maxBytes: Int = 1 << 30) -> ResponseCache {
        ResponseCache(store: store, maxBytes: maxBytes, logger: Logger(label: "test"))
    }

    static func answer(_ number: Int, words: Int = 60) -> CachedAnswer {
        let text = (0..<words).map { "word\(($0 * 7 + number) % 13)" }.joined(separator: " ")
        return CachedAnswer(
            text: "Answer \(number): \(text)\nwith \"quotes\", a tab\t and ünïcödé 🙂",
            model: "claude-haiku-4-5",
            finishReason: "end_turn", inputTokens: 120 + number, outputTokens: 40, dollars: 0.000_32,
            naiveDollars: 0.001_25)
    }

    static func key(_ number: Int) -> String { SHA256.hex("item \(number)") }

    func count() throws -> Int {
        try store.count("cache_entries")
    }

    /// Inserts `record`'s row as it is, as an older offpeak or another process would have: no
    /// `ResponseCache` of this process hears of it.
    /// On SQLite the row has its id too (`CacheRowID`), which a writer must make from the key.
    static func write(_ record: CacheEntryRecord, to store: Store) throws {
        let id: [(any EngineValue)?] =
            if case .sqlite = store.engine { [Int(CacheRowID.of(record.key))] } else { [] }
        try store.execute(
            """
            INSERT INTO cache_entries (\(id.isEmpty ? "" : "id, ")key, kind, job, provider, model, url,
                created_at, expires_at, last_access_at, hits, raw_bytes, stored_bytes, payload, etag,
                last_modified)
            VALUES (\(id.isEmpty ? "" : "?, ")?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            id + [
                record.key, record.kind.rawValue, record.job, record.provider, record.model, record.url,
                record.createdAt, record.expiresAt, record.lastAccessAt, record.hits, record.rawBytes,
                record.storedBytes, record.payload, record.etag, record.lastModified,
            ])
    }

    /// Rewrites the stored payload of every entry (or of the entry `key`) behind the cache's back.
    func damagePayloads(key: String? = nil, _ damage: (Data) -> Data) throws {
        let keys =
            try key.map { [$0] }
            ?? store.values("SELECT key FROM cache_entries ORDER BY key", as: String.self)
            .compactMap { $0 }
        for key in keys {
            let payload = try store.value(
                "SELECT payload FROM cache_entries WHERE key = ?", [key], as: Data.self)
            try store.execute("UPDATE cache_entries SET payload = ? WHERE key = ?", [damage(payload), key])
        }
    }

    @Test func answersRoundTripInTheAnswerForm() throws {
        let cache = cache()
        let answers = (1...3).map { (key: Self.key($0), answer: Self.answer($0)) }
        try cache.save(answers: answers, job: "digest", provider: "sim", ttl: 3600, now: Self.t0)
        for (key, answer) in answers {
            #expect(try cache.answer(for: key, now: Self.t0 + 10) == answer)
        }
        #expect(try cache.answer(for: Self.key(99), now: Self.t0 + 10) == nil)

        func column<Value: EngineColumn>(_ name: String, as type: Value.Type) throws -> Value? {
            try store.values("SELECT \(name) FROM cache_entries WHERE key = ?", [Self.key(1)], as: type).first
                ?? nil
        }
        let payload = try #require(try column("payload", as: Data.self))
        #expect(Array(payload.prefix(4)) == AnswerPayload.magic)
        #expect(try column("stored_bytes", as: Int.self) == payload.count)
        let answer = Self.answer(1)
        let recordBytes =
            answer.text.utf8.count + answer.model.utf8.count + answer.finishReason.utf8.count
            + AnswerPayload.trailerBytes
        #expect(try column("raw_bytes", as: Int.self) == recordBytes)
        #expect(payload.count < recordBytes, "the record is compressed")
        #expect(try column("kind", as: String.self) == "answer")
        #expect(try column("job", as: String.self) == "digest")
        #expect(try column("model", as: String.self) == "claude-haiku-4-5")
        // `cache show` prints it as the JSON form held it: sorted keys.
        let text = try CachePayload.text(payload)
        #expect(text.hasPrefix("{\"dollars\":"), "keys are sorted")
        #expect(try JSONDecoder().decode(CachedAnswer.self, from: Data(text.utf8)) == answer)
    }

    /// Entries an older offpeak wrote (JSON in an LZ4 frame) are still hits, shown and peeked.
    @Test func answersInTheOldJSONFormAreStillRead() throws {
        let cache = cache()
        let (frame, raw) = try CachePayload.encodeJSON(Self.answer(1))
        #expect(Array(frame.prefix(4)) == [0x04, 0x22, 0x4D, 0x18], "an LZ4 frame")
        try Self.write(
            CacheEntryRecord(
                key: Self.key(1), kind: .answer, job: "j", provider: "sim", model: "m", url: nil,
                createdAt: Self.t0, expiresAt: Self.t0 + 60, lastAccessAt: Self.t0, hits: 0, rawBytes: raw,
                storedBytes: frame.count, payload: Data(frame), etag: nil, lastModified: nil),
            to: store)
        #expect(try cache.answer(for: Self.key(1), now: Self.t0 + 1) == Self.answer(1))
        #expect(try cache.peekAnswer(for: Self.key(1), now: Self.t0 + 1) == Self.answer(1))
        let shown = try #require(try cache.entry(key: Self.key(1), now: Self.t0 + 1))
        #expect(shown.payload == String(decoding: try LZ4Frame.decompress(frame), as: UTF8.self))
        #expect(try cache.stats(now: Self.t0 + 1).hitsTotal == 1)
    }

    /// A round's keys looked up together count as one `answer(for:)` per key would: a key asked
    /// twice is two hits, a missing one asked twice two misses. (Both engines: this suite runs on
    /// each pass.)
    @Test func manyKeysAtOnceCountAsOneLookupEach() throws {
        let cache = cache()
        try cache.save(
            answers: [(Self.key(1), Self.answer(1)), (Self.key(2), Self.answer(2))], job: "j",
            provider: "sim",
            ttl: 60, now: Self.t0)
        let found = try cache.answers(
            for: [Self.key(1), Self.key(3), Self.key(1), Self.key(2), Self.key(3)], now: Self.t0 + 1)
        #expect(found == [Self.key(1): Self.answer(1), Self.key(2): Self.answer(2)])
        let stats = try cache.stats(now: Self.t0 + 1)
        #expect(stats.hitsTotal == 3)
        #expect(stats.missesTotal == 2)
    }

    /// Saves answers 1 and 2, in the answer form or (`json`) in the form older offpeaks wrote.
    func saveTwo(_ cache: ResponseCache, json: Bool) throws {
        guard json else {
            return try cache.save(
                answers: [(Self.key(1), Self.answer(1)), (Self.key(2), Self.answer(2))], job: "j",
                provider: "sim", ttl: 3600, now: Self.t0)
        }
        for number in 1...2 {
            let (frame, raw) = try CachePayload.encodeJSON(Self.answer(number))
            try Self.write(
                CacheEntryRecord(
                    key: Self.key(number), kind: .answer, job: "j", provider: "sim", model: "m", url: nil,
                    createdAt: Self.t0, expiresAt: Self.t0 + 3600, lastAccessAt: Self.t0, hits: 0,
                    rawBytes: raw, storedBytes: frame.count, payload: Data(frame), etag: nil,
                    lastModified: nil),
                to: store)
        }
    }

    @Test(arguments: [false, true]) func aFlippedPayloadIsAMissAndIsDeleted(json: Bool) throws {
        let cache = cache()
        try saveTwo(cache, json: json)
        try damagePayloads(key: Self.key(1)) { payload in
            payload.prefix(30) + Data([0xFF, 0xFF]) + payload.dropFirst(32)
        }
        #expect(try cache.answer(for: Self.key(1), now: Self.t0 + 1) == nil)
        #expect(try cache.answer(for: Self.key(1), now: Self.t0 + 1) == nil, "still a miss, no crash")
        #expect(try cache.answer(for: Self.key(2), now: Self.t0 + 1) == Self.answer(2))
        #expect(try count() == 1, "the corrupt entry was deleted")
        let stats = try cache.stats(now: Self.t0 + 1)
        #expect(stats.missesTotal == 2)
        #expect(stats.hitsTotal == 1)
    }

    @Test(arguments: [false, true]) func aTruncatedPayloadIsAMissAndIsDeleted(json: Bool) throws {
        let cache = cache()
        try saveTwo(cache, json: json)
        try damagePayloads { payload in payload.dropLast(9) }
        #expect(try cache.answer(for: Self.key(1), now: Self.t0 + 1) == nil)
        #expect(try cache.peekAnswer(for: Self.key(2), now: Self.t0 + 1) == nil)
        #expect(try count() == 1, "a peek deletes nothing")
        #expect(throws: OffpeakError.self) { _ = try cache.entry(key: Self.key(2), now: Self.t0 + 1) }
    }

    @Test func aPayloadThatIsNotAnAnswerIsAMissAndIsDeleted() throws {
        let cache = cache()
        try cache.save(
            answers: [(Self.key(1), Self.answer(1))], job: "j", provider: "sim", ttl: 3600, now: Self.t0)
        let wrong = Data(LZ4Frame.compress(Array("{\"text\": 42}".utf8)))
        try store.execute("UPDATE cache_entries SET payload = ?", [wrong])
        #expect(try cache.answer(for: Self.key(1), now: Self.t0 + 1) == nil)
        #expect(try count() == 0)
    }

    @Test func answersExpireAfterTheirTTLAndPurgeRemovesThem() throws {
        let cache = cache()
        try cache.save(
            answers: [(Self.key(1), Self.answer(1))], job: "j", provider: "sim", ttl: 100, now: Self.t0)
        try cache.save(
            answers: [(Self.key(2), Self.answer(2))], job: "j", provider: "sim", ttl: 1000, now: Self.t0)
        #expect(try cache.answer(for: Self.key(1), now: Self.t0 + 99) == Self.answer(1))
        #expect(try cache.answer(for: Self.key(1), now: Self.t0 + 101) == nil)
        let expired = try cache.entries(expiredOnly: true, now: Self.t0 + 101)
        #expect(expired.map(\.key) == [Self.key(1)])
        #expect(expired.first?.expired == true)
        #expect(try cache.stats(now: Self.t0 + 101).expiredEntries == 1)
        #expect(try cache.purge(.expired, now: Self.t0 + 101).removed == 1)
        #expect(try cache.entries(now: Self.t0 + 101).map(\.key) == [Self.key(2)])
    }

    /// An entry an older offpeak wrote with an expiry past year 9999 (a `cache_ttl` with no bound)
    /// made `cache ls` and `cache show` trap; now they say which entry cannot be read.
    // SQLite only: GRDB cannot read a year past 9999 back; PostgreSQL's timestamptz holds it.
    @Test(.sqliteOnly) func anEntryWithADateTheStoreCannotReadIsAnErrorNotATrap() throws {
        let cache = cache()
        try cache.save(
            answers: [(Self.key(1), Self.answer(1))], job: "j", provider: "sim", ttl: 100, now: Self.t0)
        try cache.flush()
        try store.sqlite.write { db in
            try db.execute(sql: "UPDATE cache_entries SET expires_at = '10240-08-12 16:10:49.216'")
        }
        #expect(throws: OffpeakError.self) { _ = try cache.entries(now: Self.t0) }
        do {
            _ = try cache.entry(key: Self.key(1), now: Self.t0)
            Issue.record("an unreadable entry was shown")
        } catch {
            #expect(error.status == .dataError)
            #expect(error.message == "cache entry \(Self.key(1)) is unreadable")
        }
    }

    @Test func theSizeCapEvictsTheLeastRecentlyUsedFirst() throws {
        // Six answers of the same shape: their frames are all about one size.
        let probe = cache()
        let answers = (10...15).map { (key: Self.key($0), answer: Self.answer($0, words: 200)) }
        try probe.save(answers: Array(answers.prefix(4)), job: "j", provider: "sim", ttl: 3600, now: Self.t0)
        let fourEntries = try probe.stats(now: Self.t0).storedBytes
        let slack = fourEntries / 8  // half an entry
        let cache = cache(maxBytes: fourEntries + slack)

        // Entries 10 and 11 are used later than 12 and 13.
        #expect(try cache.answer(for: Self.key(10), now: Self.t0 + 10) != nil)
        #expect(try cache.answer(for: Self.key(11), now: Self.t0 + 11) != nil)
        try cache.save(
            answers: Array(answers.suffix(2)), job: "j", provider: "sim", ttl: 3600, now: Self.t0 + 20)

        let kept = Set(try cache.entries(now: Self.t0 + 20).map(\.key))
        #expect(kept == Set([10, 11, 14, 15].map(Self.key)))
        #expect(try cache.stats(now: Self.t0 + 20).storedBytes <= fourEntries + slack)
        #expect(try cache.answer(for: Self.key(12), now: Self.t0 + 21) == nil)
    }

    @Test func sourcesAreKeptStaleAndRefreshedAfterANotModified() throws {
        let cache = cache()
        let source = CachedSource(
            url: "https://example.org/tides", contentType: "text/html", text: "<p>High tide at noon</p>",
            etag: "\"v1\"", lastModified: "Tue, 01 Jul 2025 10:00:00 GMT", fetchedAt: Self.t0)
        #expect(try cache.source(url: source.url, now: Self.t0) == nil)
        try cache.save(source: source, job: "research", ttl: 60, now: Self.t0)

        let fresh = try #require(try cache.source(url: source.url, now: Self.t0 + 30))
        #expect(fresh.source == source)
        #expect(fresh.fresh)
        let stale = try #require(try cache.source(url: source.url, now: Self.t0 + 61))
        #expect(stale.source == source, "a stale source is still returned, for revalidation")
        #expect(!stale.fresh)

        try cache.refresh(sourceURL: source.url, ttl: 60, now: Self.t0 + 61)
        #expect(try cache.source(url: source.url, now: Self.t0 + 100)?.fresh == true)
        let entry = try #require(
            try cache.entry(key: ResponseCache.sourceKey(source.url), now: Self.t0 + 100))
        #expect(entry.summary.kind == .source)
        #expect(entry.summary.url == source.url)
        #expect(entry.summary.expiresAt == Self.t0 + 121)
        #expect(entry.summary.lastAccessAt >= Self.t0 + 61)
        #expect(entry.summary.hits == 2, "two fresh reads")
        #expect(ResponseCache.sourceKey(source.url) == "source:" + SHA256.hex(source.url))
        let stats = try cache.stats(now: Self.t0 + 100)
        #expect(stats.hitsTotal == 2)
        #expect(stats.missesTotal == 2, "never fetched, then stale")
    }

    @Test func aCorruptSourceIsNilAndDeleted() throws {
        let cache = cache()
        let source = CachedSource(
            url: "https://example.org/a", contentType: "text/plain", text: "a", fetchedAt: Self.t0)
        try cache.save(source: source, job: nil, ttl: 60, now: Self.t0)
        try store.execute("UPDATE cache_entries SET payload = ?", [Data([0x04, 0x22, 0x4D, 0x18])])
        #expect(try cache.source(url: source.url, now: Self.t0) == nil)
        #expect(try count() == 0)
    }

    @Test func statsCountHitsAndMissesByDayAndSavedDollarsFromTheLedger() throws {
        let now = Date()
        let yesterday = Calendar.current.date(byAdding: .day, value: -1, to: now) ?? now - 86_400
        let cache = cache()
        try cache.save(
            answers: [(Self.key(1), Self.answer(1)), (Self.key(2), Self.answer(2))], job: "j",
            provider: "sim",
            ttl: 3 * 86_400, now: yesterday - 60)
        _ = try cache.answer(for: Self.key(1), now: yesterday)
        _ = try cache.answer(for: Self.key(9), now: yesterday)
        for key in [Self.key(1), Self.key(2), Self.key(1)] { _ = try cache.answer(for: key, now: now) }
        for _ in 0..<2 { _ = try cache.answer(for: Self.key(8), now: now) }
        try store.insertLedger(
            [
                (now, true, 0.0, 0.01), (now, true, 0.0, 0.02), (yesterday, true, 0.0, 0.05),
                (now, false, 0.5, 1.0),
            ].map { at, hit, dollars, naive in
                LedgerEntry(
                    id: nil, at: at, job: "j", runId: nil, provider: "sim", model: "m", tier: "fast",
                    downgraded: false, items: 1, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0,
                    cacheWriteTokens: 0, dollars: dollars, naiveDollars: naive, batchApi: false,
                    cacheHit: hit,
                    usageEstimated: false, latencyMs: 0)
            })

        let stats = try cache.stats(now: now)
        #expect(stats.entries == 2)
        #expect(stats.hitsToday == 3)
        #expect(stats.missesToday == 2)
        #expect(stats.hitsTotal == 4)
        #expect(stats.missesTotal == 3)
        #expect(abs(stats.savedDollarsToday - 0.03) < 1e-9)
        #expect(abs(stats.savedDollarsTotal - 0.08) < 1e-9)
        #expect(stats.rawBytes > stats.storedBytes / 2)
        #expect(stats.storedBytes > 0)
        // The store keeps dates to the millisecond.
        #expect(abs((stats.oldest ?? .distantPast).timeIntervalSince(yesterday - 60)) < 0.002)
        #expect(stats.newest == stats.oldest)
        let days = try store.values("SELECT DISTINCT day FROM cache_counters ORDER BY day", as: String.self)
            .compactMap { $0 }
        #expect(days == [LocalDay(containing: yesterday).text, LocalDay(containing: now).text])
        #expect(days.allSatisfy { $0.count == 10 && $0.dropFirst(4).first == "-" })
        let entries = try cache.entries(now: now)
        #expect(entries.first { $0.key == Self.key(1) }?.hits == 3)
        #expect(entries.first { $0.key == Self.key(2) }?.hits == 1)
    }

    @Test func pendingCountsReachTheDatabaseWhenTheCacheGoesAway() throws {
        do {
            let cache = cache()
            try cache.save(answers: [(Self.key(1), Self.answer(1))], job: "j", provider: "sim", ttl: 3600)
            _ = try cache.answer(for: Self.key(1))
            _ = try cache.answer(for: Self.key(2))
        }
        let hits = try store.value("SELECT CAST(SUM(hits) AS BIGINT) FROM cache_counters", as: Int.self)
        #expect(hits == 1)
        #expect(try cache().stats().missesTotal == 1)
    }

    @Test func purgeByJobAndAll() throws {
        let cache = cache()
        try cache.save(
            answers: [(Self.key(1), Self.answer(1)), (Self.key(2), Self.answer(2))], job: "a",
            provider: "sim",
            ttl: 3600, now: Self.t0)
        try cache.save(
            answers: [(Self.key(3), Self.answer(3))], job: "b", provider: "sim", ttl: 3600, now: Self.t0)
        let source = CachedSource(
            url: "https://example.org/x", contentType: "text/plain", text: "x", fetchedAt: Self.t0)
        try cache.save(source: source, job: nil, ttl: 60, now: Self.t0)

        #expect(try cache.purge(.job("a")).removed == 2)
        #expect(try cache.answer(for: Self.key(1), now: Self.t0) == nil)
        #expect(try cache.entries(job: "b", now: Self.t0).map(\.key) == [Self.key(3)])
        #expect(try cache.purge(.job("nobody")).removed == 0)
        #expect(try cache.purge(.all).removed == 2)
        #expect(try count() == 0)
    }

    @Test func entriesAreListedMostRecentlyUsedFirstWithALimit() throws {
        let cache = cache()
        for number in 1...5 {
            try cache.save(
                answers: [(Self.key(number), Self.answer(number))],
                job: number.isMultiple(of: 2) ? "even" : "odd",
                provider: "sim", ttl: 3600, now: Self.t0 + Double(number))
        }
        #expect(try cache.entries(now: Self.t0 + 10).map(\.key) == [5, 4, 3, 2, 1].map(Self.key))
        #expect(try cache.entries(job: "even", now: Self.t0 + 10).map(\.key) == [4, 2].map(Self.key))
        #expect(try cache.entries(now: Self.t0 + 10, limit: 2).count == 2)
        let first = try #require(try cache.entries(now: Self.t0 + 10).first)
        #expect(first.kind == .answer)
        #expect(first.provider == "sim")
        #expect(first.model == "claude-haiku-4-5")
        #expect(first.createdAt == Self.t0 + 5)
        #expect(first.expiresAt == Self.t0 + 3605)
        #expect(!first.expired)
    }

    @Test func showFindsAnEntryByAUniqueKeyPrefix() throws {
        let cache = cache()
        let keys = ["abcdef0123456789", "abcdef0199999999", "ffff0000aaaabbbb"]
        try cache.save(
            answers: keys.enumerated().map { ($1, Self.answer($0)) }, job: "j", provider: "sim", ttl: 3600,
            now: Self.t0)

        let exact = try #require(try cache.entry(key: keys[2], now: Self.t0))
        #expect(exact.summary.key == keys[2])
        let byPrefix = try #require(try cache.entry(key: "abcdef012", now: Self.t0))
        #expect(byPrefix.summary.key == keys[0])
        #expect(byPrefix.payload.contains("\"finishReason\":\"end_turn\""))
        #expect(try cache.entry(key: "ffff0000", now: Self.t0)?.summary.key == keys[2])
        #expect(
            try cache.entry(key: "abc", now: Self.t0) == nil, "prefixes under 8 characters are not looked up")
        #expect(try cache.entry(key: "00000000", now: Self.t0) == nil)
        #expect {
            try cache.entry(key: "abcdef01", now: Self.t0)
        } throws: { error in
            (error as? OffpeakError)?.status == .usage
        }
    }

    @Test func aSaveThroughAnotherCacheIsSeenAtOnce() throws {
        let reader = cache()
        let writer = cache()
        #expect(try reader.answer(for: Self.key(1), now: Self.t0) == nil)
        try writer.save(
            answers: [(Self.key(1), Self.answer(1))], job: "j", provider: "sim", ttl: 60, now: Self.t0)
        #expect(try reader.answer(for: Self.key(1), now: Self.t0) == Self.answer(1))
        try writer.purge(.all)
        #expect(try reader.answer(for: Self.key(1), now: Self.t0) == nil)
    }

    @Test func aWriteFromElsewhereIsSeenWithinTheSnapshotLifetime() throws {
        let cache = cache()
        #expect(try cache.answer(for: Self.key(1), now: Self.t0) == nil)
        // Another process writing the table: no ResponseCache in this process knows of it.
        let other = try workspace.openStore()
        let (frame, raw) = try CachePayload.encode(Self.answer(1))
        try Self.write(
            CacheEntryRecord(
                key: Self.key(1), kind: .answer, job: "j", provider: "sim", model: "m", url: nil,
                createdAt: Self.t0, expiresAt: Self.t0 + 60, lastAccessAt: Self.t0, hits: 0, rawBytes: raw,
                storedBytes: frame.count, payload: Data(frame), etag: nil, lastModified: nil),
            to: other)
        Thread.sleep(forTimeInterval: 0.05)
        #expect(try cache.answer(for: Self.key(1), now: Self.t0) == Self.answer(1))
    }

    // SQLite only: the engine's own migration (its columns, tables and indexes).
    @Test(.sqliteOnly) func migrationTwoAddsCountersAndTheRequestCachePolicy() throws {
        let columns = try store.sqlite.read { db in try db.columns(in: "requests").map(\.name) }
        #expect(columns.contains("cache_policy"))
        #expect(try store.sqlite.read { db in try db.tableExists("cache_counters") })
        let indexes = try store.sqlite.read { db in try db.indexes(on: "cache_entries").map(\.name) }
        #expect(indexes.contains("cache_entries_by_job"))
        #expect(indexes.contains("cache_entries_by_access"))
    }

    @Test func theFastAnswerReaderAgreesWithJSONDecoder() throws {
        let tricky = CachedAnswer(
            text: "quote \" backslash \\ slash / controls \u{01}\u{1F} newline\n tab\t emoji 🙂 \u{2028}",
            model: "m", finishReason: "length", inputTokens: -3, outputTokens: 0, dollars: 1e-7,
            naiveDollars: 12345.678)
        let (frame, _) = try CachePayload.encodeJSON(tricky)
        let json = try LZ4Frame.decompress(frame)
        let fast = json.withUnsafeBufferPointer { CachedAnswer(flatJSON: $0) }
        #expect(fast == tricky)
        #expect(try JSONDecoder().decode(CachedAnswer.self, from: Data(json)) == tricky)
        let escaped =
            Array(#"{"text":"\u00e9\ud83d\ude42","model":"m","finishReason":"x","inputTokens":1,"#.utf8)
            + Array(#""outputTokens":2,"dollars":0,"naiveDollars":0.5}"#.utf8)
        #expect(escaped.withUnsafeBufferPointer { CachedAnswer(flatJSON: $0) }?.text == "é🙂")
        let nested = Array(#"{"text":{"a":1}}"#.utf8)
        #expect(nested.withUnsafeBufferPointer { CachedAnswer(flatJSON: $0) } == nil)
    }
}
