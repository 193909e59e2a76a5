import Foundation

/// One cached answer, stored as `AnswerPayload` (older entries: JSON then LZ4).
public struct CachedAnswer: Codable, Sendable, Equatable {
    var text: String
    var model: String
    var finishReason: String
    var inputTokens: Int
    var outputTokens: Int
    /// What it cost when first answered (its share of a batched call).
    var dollars: Double
    /// What asking for it alone, uncached, costs: what a hit saves.
    var naiveDollars: Double
    /// The web search results the answer cited (`SearchCitation.stored`), so a hit cites them too;
    /// nil for none. An answer with citations is kept in the JSON form (`AnswerPayload` has no
    /// field for them), left out of it when nil.
    var citations: String?

    public init(
        text: String, model: String, finishReason: String, inputTokens: Int, outputTokens: Int,
        dollars: Double, naiveDollars: Double, citations: String? = nil
    ) {
        self.text = text
        self.model = model
        self.finishReason = finishReason
        self.inputTokens = inputTokens
        self.outputTokens = outputTokens
        self.dollars = dollars
        self.naiveDollars = naiveDollars
        self.citations = citations
    }
}

/// One fetched research source, with what revalidating it needs.
struct CachedSource: Codable, Sendable, Equatable {
    var url: String
    var contentType: String
    var text: String
    var etag: String?
    var lastModified: String?
    /// Kept to the millisecond (the payload's ISO 8601 dates carry no finer part).
    var fetchedAt: Date
    /// Where `url` has moved for good (a `301` or `308`, possibly after a few of them): the next
    /// check asks there directly. `nil` when it has not moved; absent from older payloads.
    var movedTo: String?

    init(
        url: String, contentType: String, text: String, etag: String? = nil, lastModified: String? = nil,
        fetchedAt: Date, movedTo: String? = nil
    ) {
        self.url = url
        self.contentType = contentType
        self.text = text
        self.etag = etag
        self.lastModified = lastModified
        self.fetchedAt = fetchedAt
        self.movedTo = movedTo
    }
}

/// The payloads' encodings. An answer is written as `AnswerPayload` (a binary record in a raw LZ4
/// block: what a hit reads fastest); a source as JSON with sorted keys and ISO 8601 dates (with
/// milliseconds) in an LZ4 frame, the form answers had before and are still read in.
enum CachePayload {
    enum Failure: Error {
        case decompress(LZ4Frame.Failure)
        case decode(String)
    }

    /// The largest payload a cache entry may decompress to.
    static let maxBytes = 64 << 20

    /// An answer's payload, and its size decompressed (what `raw_bytes` holds).
    static func encode(_ answer: CachedAnswer) throws(OffpeakError) -> (payload: [UInt8], rawBytes: Int) {
        if answer.citations == nil, let (payload, recordBytes) = AnswerPayload.encode(answer) {
            return (payload, recordBytes)
        }
        return try encodeJSON(answer)
    }

    /// `value` as JSON in an LZ4 frame, and the JSON's size.
    static func encodeJSON<Value: Encodable>(_ value: Value) throws(OffpeakError) -> (
        payload: [UInt8], rawBytes: Int
    ) {
        do {
            let json = try Self.json(value)
            return (LZ4Frame.compress(json), json.count)
        } catch {
            throw OffpeakError(.software, "cannot encode a cache payload", cause: "\(error)")
        }
    }

    /// An answer's payload, in either form, read in place from SQLite's buffer.
    static func decodeAnswer(from payload: UnsafeRawBufferPointer) throws(Failure) -> CachedAnswer {
        guard AnswerPayload.isAnswerPayload(payload) else {
            return try decode(CachedAnswer.self, from: payload)
        }
        do {
            return try AnswerPayload.decode(payload, maxBytes: maxBytes)
        } catch {
            throw .decompress(error)
        }
    }

    /// Decompresses and decodes a JSON payload, read in place from SQLite's buffer.
    static func decode<Value: Decodable>(_ type: Value.Type, from frame: UnsafeRawBufferPointer)
        throws(Failure) -> Value
    {
        let decoded: Result<Value, Failure>
        do {
            decoded = try LZ4Frame.withDecompressed(frame, maxBytes: maxBytes) { json in
                if type == CachedAnswer.self, let answer = CachedAnswer(flatJSON: json) as? Value {
                    return .success(answer)
                }
                do {
                    return .success(try decoder.decode(type, from: Data(buffer: json)))
                } catch {
                    return .failure(.decode("\(error)"))
                }
            }
        } catch {
            throw .decompress(error)
        }
        return try decoded.get()
    }

    /// The payload as JSON text, for `offpeak cache show`: an answer in the binary form is shown as
    /// the JSON form would hold it.
    static func text(_ payload: Data) throws(Failure) -> String {
        let text = payload.withUnsafeBytes { bytes in
            Result { () throws(Failure) in
                guard AnswerPayload.isAnswerPayload(bytes) else { return try jsonText(bytes) }
                let answer = try decodeAnswer(from: bytes)
                do {
                    return String(decoding: try json(answer), as: UTF8.self)
                } catch {
                    throw .decode("\(error)")
                }
            }
        }
        return try text.get()
    }

    /// The JSON in an LZ4 frame.
    private static func jsonText(_ frame: UnsafeRawBufferPointer) throws(Failure) -> String {
        let text = Result { () throws(LZ4Frame.Failure) in
            try LZ4Frame.withDecompressed(frame, maxBytes: maxBytes) { String(decoding: $0, as: UTF8.self) }
        }
        do {
            return try text.get()
        } catch {
            throw .decompress(error)
        }
    }

    /// `value` as JSON with sorted keys, dates in ISO 8601 with milliseconds.
    private static func json<Value: Encodable>(_ value: Value) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(Self.isoFormat))
        }
        return Array(try encoder.encode(value))
    }

    private static let isoFormat = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            if let date = (try? isoFormat.parse(text)) ?? (try? Date.ISO8601FormatStyle().parse(text)) {
                return date
            }
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath, debugDescription: "not an ISO 8601 date"))
        }
        return decoder
    }()
}
