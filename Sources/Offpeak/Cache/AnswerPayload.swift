/// A cached answer's payload as offpeak writes it now: its fields in a small binary record, as one
/// raw LZ4 block, behind a header that says what it is, how large it decompresses and a checksum.
///
/// A hit is the cache's hot path. The earlier form (JSON in an LZ4 frame, still read: see
/// `CachePayload.decodeAnswer`) cost a JSON parse of the whole ~2 KB text (looking for quotes and
/// escapes, converting numbers) and the frame's XXH32 over the decompressed content; together more
/// than the SQLite read. Here the numbers are read in place and the text is decompressed straight
/// into the `String` the answer keeps, so a hit copies it once.
///
/// ```
/// payload  magic "OPA\u{1}" (4) | checksum (8) | record size (4) | LZ4 block of the record
/// record   text | model | finish reason | input tokens (8) | output tokens (8) | dollars (8)
///          | naive dollars (8) | model bytes (4) | finish reason bytes (4)
/// ```
/// Integers are little-endian, dollars IEEE 754 doubles; the checksum is XXH64 of every byte after
/// it (the record size and the block), so a damaged payload is caught before it is decompressed.
/// The text comes first so that it lands at the start of the string's buffer; the fixed fields
/// last, where they are found from the record's size. No LZ4 frame begins with "O", which is how
/// the two forms are told apart.
enum AnswerPayload {
    static let magic: [UInt8] = [0x4F, 0x50, 0x41, 0x01]
    static let headerBytes = 16
    /// The record's fixed fields, after its strings.
    static let trailerBytes = 40

    /// Whether `payload` is in this form (else it is an LZ4 frame of JSON).
    static func isAnswerPayload(_ payload: UnsafeRawBufferPointer) -> Bool {
        payload.count >= magic.count && payload[0] == magic[0] && payload[1] == magic[1]
            && payload[2] == magic[2] && payload[3] == magic[3]
    }

    /// The payload of `answer`, and its record's size; nil when the record is too large for one LZ4
    /// block (about 2 GB), which the JSON form then holds.
    static func encode(_ answer: CachedAnswer) -> (payload: [UInt8], recordBytes: Int)? {
        var record: [UInt8] = []
        record.reserveCapacity(
            answer.text.utf8.count + answer.model.utf8.count + answer.finishReason.utf8.count + trailerBytes)
        record.append(contentsOf: answer.text.utf8)
        record.append(contentsOf: answer.model.utf8)
        record.append(contentsOf: answer.finishReason.utf8)
        append(UInt64(bitPattern: Int64(answer.inputTokens)), to: &record)
        append(UInt64(bitPattern: Int64(answer.outputTokens)), to: &record)
        append(answer.dollars.bitPattern, to: &record)
        append(answer.naiveDollars.bitPattern, to: &record)
        append(UInt32(answer.model.utf8.count), to: &record)
        append(UInt32(answer.finishReason.utf8.count), to: &record)
        guard let block = LZ4Block.compress(record) else { return nil }

        var payload = magic
        payload.reserveCapacity(headerBytes + block.count)
        append(UInt64(0), to: &payload)  // the checksum, filled in below
        append(UInt32(record.count), to: &payload)
        payload.append(contentsOf: block)
        let checksum = payload.withUnsafeBytes {
            XXHash64.digest(UnsafeRawBufferPointer(rebasing: $0[12...]))
        }
        withUnsafeBytes(of: checksum.littleEndian) { payload.replaceSubrange(4..<12, with: $0) }
        return (payload, record.count)
    }

    /// The answer in `payload` (which `isAnswerPayload`), read in place from SQLite's buffer.
    /// - Throws: `.truncated` for a payload shorter than its header; `.corrupt` when the checksum
    ///   or the block is wrong; `.tooLarge` for a record over `maxBytes`.
    static func decode(_ payload: UnsafeRawBufferPointer, maxBytes: Int) throws(LZ4Frame.Failure)
        -> CachedAnswer
    {
        guard payload.count > headerBytes, let base = payload.baseAddress else { throw .truncated }
        let checksum = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: 4, as: UInt64.self))
        guard XXHash64.digest(UnsafeRawBufferPointer(rebasing: payload[12...])) == checksum else {
            throw .corrupt("checksum mismatch")
        }
        let recordBytes = Int(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: 12, as: UInt32.self)))
        guard recordBytes <= maxBytes else { throw .tooLarge(limit: maxBytes) }
        guard recordBytes >= trailerBytes else { throw .corrupt("record shorter than its fixed fields") }

        var fields: Fields?
        var failure = "block does not decompress to the record's size"
        let text = String(unsafeUninitializedCapacity: recordBytes) { record in
            let block = UnsafeRawBufferPointer(rebasing: payload[headerBytes...])
            guard LZ4Block.decompress(block, into: record) else { return 0 }
            guard let read = Fields(record: UnsafeBufferPointer(record)) else {
                failure = "string lengths exceed the record"
                return 0
            }
            fields = read
            return read.textBytes
        }
        guard let fields else { throw .corrupt(failure) }
        return CachedAnswer(
            text: text, model: fields.model, finishReason: fields.finishReason,
            inputTokens: fields.inputTokens, outputTokens: fields.outputTokens, dollars: fields.dollars,
            naiveDollars: fields.naiveDollars)
    }

    /// What a record holds besides its text, and how many bytes the text takes.
    private struct Fields {
        var textBytes: Int
        var model: String
        var finishReason: String
        var inputTokens: Int
        var outputTokens: Int
        var dollars: Double
        var naiveDollars: Double

        init?(record: UnsafeBufferPointer<UInt8>) {
            let raw = UnsafeRawBufferPointer(record)
            let trailer = record.count - AnswerPayload.trailerBytes
            func word(_ offset: Int) -> UInt64 {
                UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: trailer + offset, as: UInt64.self))
            }
            func count(_ offset: Int) -> Int {
                Int(
                    UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: trailer + offset, as: UInt32.self))
                )
            }
            let modelBytes = count(32)
            let finishBytes = count(36)
            guard modelBytes + finishBytes <= trailer else { return nil }
            textBytes = trailer - modelBytes - finishBytes
            model = String(decoding: record[textBytes..<textBytes + modelBytes], as: UTF8.self)
            finishReason = String(decoding: record[(trailer - finishBytes)..<trailer], as: UTF8.self)
            inputTokens = Int(Int64(bitPattern: word(0)))
            outputTokens = Int(Int64(bitPattern: word(8)))
            dollars = Double(bitPattern: word(16))
            naiveDollars = Double(bitPattern: word(24))
        }
    }

    private static func append<Word: FixedWidthInteger>(_ word: Word, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: word.littleEndian) { bytes.append(contentsOf: $0) }
    }
}
