import Foundation
import GRDB
import Synchronization

/// A request's payload as its row holds it: the system prompt kept once, in `shared_texts`.
///
/// Every request of a job carries the job's system prompt and instructions, often most of the
/// payload (W-inbox: ~5.2 KB of ~6 KB). Stored whole in each row, `offpeak submit` wrote two pages
/// a line and SQLite spent most of its time in `pwrite` (15 calls a line). So a request's row, as
/// `RequestInserter` adds it (submitted, or a run's from its spec), holds its payload with the
/// system prompt's text (escaped, as in the JSON) replaced by its SHA-256 between two 0x01 bytes,
/// and `shared_texts` holds the text once by that hash. Canonical JSON escapes every control
/// character, so a raw 0x01 never occurs in a payload written whole: rows written either way (old
/// rows, a pending request whose spec changed, rewritten whole by `Store.merge`) are read alike, and
/// old rows need no migration. Above the store a
/// payload is always whole: every read of a `RequestRecord` goes through `expand`.
///
/// The texts are never deleted: a store holds one per distinct prompt, and requests are kept.
enum StoredPayload {
    static let marker = UInt8(0x01)
    /// A prompt shorter than this is left in place: its hash would take about as much room.
    static let minimumSharedBytes = 256

    static let createTableSQL = """
        CREATE TABLE shared_texts (hash TEXT PRIMARY KEY NOT NULL, text TEXT NOT NULL)
        """

    /// Texts by hash, read or written by this process in any store: a hash names one text
    /// wherever it is, so what one store gave is good for another's rows. Bounded; cleared when full.
    private static let known = Mutex<[String: String]>([:])
    private static let knownLimit = 64

    /// Writes payloads of one transaction in their stored form, adding each text once.
    struct Writer {
        private let db: Database
        /// Texts this transaction made sure `shared_texts` has.
        private var stored: Set<String> = []
        private var sharing = Sharing()

        init(_ db: Database) { self.db = db }

        /// `payload` with its system prompt by reference when it has one worth sharing, else whole.
        mutating func stored(_ payload: String) throws -> String {
            guard let (row, hash) = sharing.stored(payload) else { return payload }
            if stored.insert(hash).inserted, let text = sharing.text {
                try db.execute(
                    sql: "INSERT INTO shared_texts (hash, text) VALUES (?, ?) ON CONFLICT (hash) DO NOTHING",
                    arguments: [hash, text])
            }
            return row
        }
    }

    /// The stored form of payloads, decided without a store (every engine writes the same rows):
    /// which system prompt a payload shares, by what hash, and what its row holds.
    struct Sharing {
        /// The last prompt seen (escaped) and its hash: a job's requests share it.
        private var last: (text: [UInt8], hash: String)?

        /// The last shared prompt's text, as `shared_texts` holds it.
        var text: String? { last.map { String(decoding: $0.text, as: UTF8.self) } }

        /// `payload` as its row holds it, with the hash of the text it names; nil when it is stored whole.
        mutating func stored(_ payload: String) -> (row: String, hash: String)? {
            var payload = payload
            let last = self.last
            let parts = payload.withUTF8 { json -> (prefix: [UInt8], text: [UInt8]?, suffix: [UInt8])? in
                guard
                    let range = CompletionRequest.systemRange(
                        inCanonicalJSON: json, length: last?.text.count),
                    range.count >= StoredPayload.minimumSharedBytes
                else { return nil }
                let text = UnsafeBufferPointer(rebasing: json[range])
                let known = last.map { StoredPayload.same(text, $0.text) } ?? false
                return (
                    Array(json[..<range.lowerBound]), known ? nil : Array(text),
                    Array(json[range.upperBound...])
                )
            }
            guard let parts else { return nil }
            if let text = parts.text { self.last = (text, SHA256.hex(text)) }
            guard let hash = self.last?.hash else { return nil }
            var bytes = parts.prefix
            bytes.reserveCapacity(parts.prefix.count + 66 + parts.suffix.count)
            bytes.append(StoredPayload.marker)
            bytes.append(contentsOf: hash.utf8)
            bytes.append(StoredPayload.marker)
            bytes.append(contentsOf: parts.suffix)
            return (String(decoding: bytes, as: UTF8.self), hash)
        }
    }

    fileprivate static func same(_ text: UnsafeBufferPointer<UInt8>, _ other: [UInt8]) -> Bool {
        guard text.count == other.count else { return false }
        return other.withUnsafeBufferPointer { other in
            guard let left = text.baseAddress, let right = other.baseAddress else { return true }
            return memcmp(left, right, other.count) == 0
        }
    }

    /// `records` with whole payloads, each shared text read once.
    static func expand(_ records: [RequestRecord], _ db: Database) throws -> [RequestRecord] {
        var records = records
        for index in records.indices {
            if let whole = try expand(records[index].payload, db) { records[index].payload = whole }
        }
        return records
    }

    static func expand(_ record: RequestRecord?, _ db: Database) throws -> RequestRecord? {
        guard var record else { return nil }
        if let whole = try expand(record.payload, db) { record.payload = whole }
        return record
    }

    /// The whole payload of a stored one, or nil when it is whole already.
    /// - Throws: a data error when the text it names is not in the store.
    private static func expand(_ payload: String, _ db: Database) throws -> String? {
        guard let split = reference(in: payload) else { return nil }
        return whole(split.prefix, try text(split.hash, db), split.suffix)
    }

    /// A payload made whole from its parts around the hash, appended as UTF-8 (`+` of a substring
    /// and a string appends character by character: 4 % of a run's CPU).
    static func whole(_ prefix: Substring, _ text: String, _ suffix: Substring) -> String {
        var whole = String()
        whole.reserveCapacity(prefix.utf8.count + text.utf8.count + suffix.utf8.count)
        whole.append(contentsOf: prefix)
        whole.append(text)
        whole.append(contentsOf: suffix)
        return whole
    }

    /// A stored payload's parts around the hash of the text it names, or nil when it is whole.
    static func reference(in payload: String) -> (prefix: Substring, hash: String, suffix: Substring)? {
        var payload = payload
        return payload.withUTF8 { bytes -> (prefix: Substring, hash: String, suffix: Substring)? in
            guard let base = bytes.baseAddress, let found = memchr(base, Int32(marker), bytes.count) else {
                return nil
            }
            let first = UnsafePointer<UInt8>(found.assumingMemoryBound(to: UInt8.self)) - base
            guard let second = bytes[(first + 1)...].firstIndex(of: marker) else { return nil }
            return (
                Substring(decoding: UnsafeBufferPointer(rebasing: bytes[..<first]), as: UTF8.self),
                String(decoding: UnsafeBufferPointer(rebasing: bytes[(first + 1)..<second]), as: UTF8.self),
                Substring(decoding: UnsafeBufferPointer(rebasing: bytes[(second + 1)...]), as: UTF8.self)
            )
        }
    }

    private static func text(_ hash: String, _ db: Database) throws -> String {
        if let text = knownText(hash) { return text }
        guard
            let text = try String.fetchOne(
                db, sql: "SELECT text FROM shared_texts WHERE hash = ?", arguments: [hash])
        else { throw missing(hash) }
        remember(text, hash: hash)
        return text
    }

    /// A text this process read or wrote by `hash`, in any store.
    static func knownText(_ hash: String) -> String? { known.withLock { $0[hash] } }

    static func remember(_ text: String, hash: String) {
        known.withLock { known in
            if known.count >= knownLimit { known.removeAll() }
            known[hash] = text
        }
    }

    /// A payload names a text its store does not have.
    static func missing(_ hash: String) -> OffpeakError {
        OffpeakError(
            .dataError, "a request's system prompt (shared text \(hash)) is missing from the store")
    }
}
