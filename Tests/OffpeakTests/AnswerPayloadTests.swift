import Foundation
import Testing

@testable import Offpeak

/// The answer form of a cache payload (`AnswerPayload`): its round trip, and a damaged payload is
/// an error, never a wrong answer or a trap. Through the cache, both forms are in
/// `ResponseCacheTests`.
struct AnswerPayloadTests {
    static func encode(_ answer: CachedAnswer) throws -> [UInt8] {
        try #require(AnswerPayload.encode(answer)).payload
    }

    static func decode(_ payload: [UInt8]) throws(LZ4Frame.Failure) -> CachedAnswer {
        let decoded = payload.withUnsafeBytes { bytes in
            Result { () throws(LZ4Frame.Failure) in try AnswerPayload.decode(bytes, maxBytes: 1 << 20) }
        }
        return try decoded.get()
    }

    /// `payload` with its checksum made right again, as a damaged record that passes the check.
    static func resealed(_ payload: [UInt8]) -> [UInt8] {
        var payload = payload
        let checksum = payload.withUnsafeBytes {
            XXHash64.digest(UnsafeRawBufferPointer(rebasing: $0[12...]))
        }
        withUnsafeBytes(of: checksum.littleEndian) { payload.replaceSubrange(4..<12, with: $0) }
        return payload
    }

    @Test(arguments: [
        ResponseCacheTests.answer(1, words: 400),
        CachedAnswer(
            text: "", model: "", finishReason: "", inputTokens: 0, outputTokens: 0, dollars: 0,
            naiveDollars: 0),
        CachedAnswer(
            text: "quote \" backslash \\ controls \u{00}\u{1F} emoji 🙂 \u{2028}",
            model: "a-model-name-longer-than-15",
            finishReason: "length", inputTokens: Int.min, outputTokens: Int.max, dollars: -1e-300,
            naiveDollars: .infinity),
    ])
    func answersRoundTrip(answer: CachedAnswer) throws {
        let (payload, recordBytes) = try #require(AnswerPayload.encode(answer))
        #expect(Array(payload.prefix(4)) == AnswerPayload.magic)
        #expect(payload.withUnsafeBytes { AnswerPayload.isAnswerPayload($0) })
        #expect(
            recordBytes
                == answer.text.utf8.count + answer.model.utf8.count + answer.finishReason.utf8.count
                + AnswerPayload.trailerBytes)
        #expect(try Self.decode(payload) == answer)
        let decoded = try payload.withUnsafeBytes { bytes throws(CachePayload.Failure) in
            try CachePayload.decodeAnswer(from: bytes)
        }
        #expect(decoded == answer)
    }

    @Test func anLZ4FrameIsNotInTheAnswerForm() throws {
        let (frame, _) = try CachePayload.encodeJSON(ResponseCacheTests.answer(1))
        #expect(!frame.withUnsafeBytes { AnswerPayload.isAnswerPayload($0) })
        #expect(![UInt8]([0x4F, 0x50]).withUnsafeBytes { AnswerPayload.isAnswerPayload($0) })
    }

    @Test func everyDamagedByteIsCaught() throws {
        let payload = try Self.encode(ResponseCacheTests.answer(2, words: 30))
        // The magic is what tells the forms apart; past it, any changed byte fails the check.
        for offset in AnswerPayload.magic.count..<payload.count {
            var damaged = payload
            damaged[offset] ^= 0x20
            #expect(throws: LZ4Frame.Failure.self) { try Self.decode(damaged) }
        }
    }

    @Test func aShortPayloadIsTruncated() throws {
        let payload = try Self.encode(ResponseCacheTests.answer(3))
        for count in [4, 12, AnswerPayload.headerBytes] {
            #expect(throws: LZ4Frame.Failure.truncated) { try Self.decode(Array(payload.prefix(count))) }
        }
        #expect(throws: LZ4Frame.Failure.self) { try Self.decode(Array(payload.dropLast(1))) }
    }

    /// A record the checksum vouches for, but which does not hold together, is still refused.
    @Test func aResealedBadRecordIsCorrupt() throws {
        let answer = ResponseCacheTests.answer(4)
        let payload = try Self.encode(answer)

        var wrongSize = payload
        wrongSize[12] &+= 1
        #expect(throws: LZ4Frame.Failure.self) { try Self.decode(Self.resealed(wrongSize)) }

        var tooLarge = payload
        tooLarge.replaceSubrange(12..<16, with: [0xFF, 0xFF, 0xFF, 0x7F])
        #expect(throws: LZ4Frame.Failure.tooLarge(limit: 1 << 20)) {
            try Self.decode(Self.resealed(tooLarge))
        }

        var badBlock = payload
        badBlock[AnswerPayload.headerBytes] = 0xFF  // a literal run longer than the block
        #expect(throws: LZ4Frame.Failure.self) { try Self.decode(Self.resealed(badBlock)) }

        // String lengths (the record's last 8 bytes) larger than the record.
        var record = Array(answer.text.utf8) + Array(answer.model.utf8) + Array(answer.finishReason.utf8)
        record += [UInt8](repeating: 0, count: 32) + [0xFF, 0xFF, 0, 0, 0, 0, 0, 0]
        let block = try #require(LZ4Block.compress(record))
        var lying = AnswerPayload.magic + [UInt8](repeating: 0, count: 8)
        withUnsafeBytes(of: UInt32(record.count).littleEndian) { lying.append(contentsOf: $0) }
        #expect(
            throws: LZ4Frame.Failure.corrupt("string lengths exceed the record")
        ) { try Self.decode(Self.resealed(lying + block)) }
    }

    @Test func xxHash64GivesTheReferenceDigests() {
        // From the reference implementation (python-xxhash 3.x, `xxh64(data).intdigest()`).
        let cases: [([UInt8], UInt64)] = [
            ([], 0xEF46_DB37_51D8_E999),
            (Array("a".utf8), 0xD24E_C4F1_A98C_6E5B),
            (Array("abc".utf8), 0x44BC_2CF5_AD77_0999),
            (Array("0123456789abcdef0123456789abcdef".utf8), 0x642A_9495_8E71_E6C5),
            (Array("The quick brown fox jumps over the lazy dog".utf8), 0x0B24_2D36_1FDA_71BC),
            ((0..<3).flatMap { _ in (0...255).map(UInt8.init) } + Array("xyz".utf8), 0xE921_A1B4_5BD7_79F8),
        ]
        for (bytes, digest) in cases {
            #expect(bytes.withUnsafeBytes { XXHash64.digest($0) } == digest, "\(bytes.count) bytes")
        }
    }
}
