import CLZ4
import Foundation
import Synchronization

/// The LZ4 frame format (not the raw block format), so a source's payload dumped from the cache (or
/// an answer's, written before `AnswerPayload`) opens with the `lz4` command-line tool:
/// `lz4 -d -c blob.lz4`.
///
/// Frames carry the content size (so decompression allocates once) and a content checksum (so a
/// damaged payload is detected, not returned). Blocks are independent and at most 64 KB, which keeps
/// the decoder's buffers small.
public enum LZ4Frame {
    public enum Failure: Error, Equatable {
        /// Not a frame, or one whose bytes or checksum are wrong; carries liblz4's error name.
        case corrupt(String)
        /// The frame ends before its end mark.
        case truncated
        /// The content is larger than the caller allows.
        case tooLarge(limit: Int)
    }

    public static func compress(_ bytes: [UInt8]) -> [UInt8] {
        var preferences = LZ4F_preferences_t()
        preferences.frameInfo.blockSizeID = LZ4F_max64KB
        preferences.frameInfo.blockMode = LZ4F_blockIndependent
        preferences.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled
        preferences.frameInfo.contentSize = UInt64(bytes.count)
        let bound = LZ4F_compressFrameBound(bytes.count, &preferences)
        return [UInt8](unsafeUninitializedCapacity: bound) { frame, count in
            let written = bytes.withUnsafeBytes { source in
                LZ4F_compressFrame(frame.baseAddress, bound, source.baseAddress, source.count, &preferences)
            }
            // With a destination of compressFrameBound bytes, liblz4 only fails when out of memory.
            precondition(LZ4F_isError(written) == 0, "LZ4F_compressFrame: \(errorName(written))")
            count = written
        }
    }

    /// Decompresses one whole frame.
    /// - Parameter maxBytes: the largest content accepted; a frame that says or turns out to hold more
    ///   fails with `.tooLarge` before that much memory is taken.
    public static func decompress(_ frame: [UInt8], maxBytes: Int = 64 << 20) throws(Failure) -> [UInt8] {
        try frame.withUnsafeBytes { bytes in
            Result { () throws(Failure) in try withDecompressed(bytes, maxBytes: maxBytes) { Array($0) } }
        }.get()
    }

    /// Decompresses `frame` into a pooled buffer and lends the content to `body`, so a hot path
    /// allocates nothing.
    static func withDecompressed<Value>(
        _ frame: UnsafeRawBufferPointer, maxBytes: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Value
    ) throws(Failure) -> Value {
        guard let source = frame.baseAddress, !frame.isEmpty else { throw .truncated }
        let context = DecompressionContext.take()
        var finished = false
        defer { context.giveBack(reusable: finished) }
        var info = LZ4F_frameInfo_t()
        var consumed = frame.count
        let header = LZ4F_getFrameInfo(context.raw, &info, source, &consumed)
        if LZ4F_isError(header) != 0 {
            let name = errorName(header)
            throw name.hasSuffix("frameHeader_incomplete") ? .truncated : .corrupt(name)
        }
        if info.contentSize > UInt64(maxBytes) { throw .tooLarge(limit: maxBytes) }
        // liblz4 decodes a block straight into the output only when a whole block's worth of room is
        // left; otherwise it decodes into its own buffer and copies.
        let blockBytes = 1 << (8 + 2 * Int(max(4, min(7, info.blockSizeID.rawValue))))
        let known = info.contentSize > 0
        var capacity = known ? Int(info.contentSize) + blockBytes : max(blockBytes, frame.count * 4)
        var written = 0
        while true {
            let output = context.buffer(capacity, keeping: written)
            var outputSize = capacity - written
            var inputSize = frame.count - consumed
            let hint = LZ4F_decompress(
                context.raw, output + written, &outputSize, source + consumed, &inputSize, nil)
            if LZ4F_isError(hint) != 0 { throw .corrupt(errorName(hint)) }
            consumed += inputSize
            written += outputSize
            if written > maxBytes { throw .tooLarge(limit: maxBytes) }
            if hint == 0 {
                finished = true
                guard consumed == frame.count else { throw .corrupt("trailing bytes after the frame") }
                return body(UnsafeBufferPointer(start: output, count: written))
            }
            if written < capacity {
                // Room was left, so liblz4 stopped for want of input.
                guard consumed < frame.count else { throw .truncated }
                continue
            }
            capacity *= 2
        }
    }

    static func errorName(_ code: Int) -> String {
        LZ4F_getErrorName(code).map { String(cString: $0) } ?? "LZ4F error \(code)"
    }
}

/// A pooled `LZ4F_dctx` and its output buffer: creating them per call would allocate every time.
private final class DecompressionContext: @unchecked Sendable {
    let raw: OpaquePointer?
    private var storage: UnsafeMutablePointer<UInt8>?
    private var capacity = 0

    private static let idle = Mutex<[DecompressionContext]>([])
    private static let maxIdle = 8
    /// A buffer larger than this is freed rather than kept for the next call.
    private static let maxKeptBytes = 1 << 20

    private init(raw: OpaquePointer?) { self.raw = raw }

    deinit {
        storage?.deallocate()
        LZ4F_freeDecompressionContext(raw)
    }

    static func take() -> DecompressionContext {
        if let context = idle.withLock({ $0.popLast() }) { return context }
        var raw: OpaquePointer?
        let status = LZ4F_createDecompressionContext(&raw, UInt32(LZ4F_VERSION))
        precondition(LZ4F_isError(status) == 0, "LZ4F_createDecompressionContext: out of memory")
        return DecompressionContext(raw: raw)
    }

    /// At least `bytes` of output room, keeping the first `kept` bytes when it grows.
    func buffer(_ bytes: Int, keeping kept: Int) -> UnsafeMutablePointer<UInt8> {
        if let storage, capacity >= bytes { return storage }
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: bytes)
        if let storage {
            grown.initialize(from: storage, count: kept)
            storage.deallocate()
        }
        storage = grown
        capacity = bytes
        return grown
    }

    /// Keeps the context for the next call, unless its frame was left unfinished: a reset does not
    /// clear everything such a frame leaves behind (liblz4 1.9.4 keeps the bytes it still expected,
    /// and fails the next frame without a content size with `frameSize_wrong`), so it is freed.
    func giveBack(reusable: Bool) {
        guard reusable else { return }
        LZ4F_resetDecompressionContext(raw)
        if capacity > Self.maxKeptBytes {
            storage?.deallocate()
            storage = nil
            capacity = 0
        }
        Self.idle.withLock { contexts in
            if contexts.count < Self.maxIdle { contexts.append(self) }
        }
    }
}
