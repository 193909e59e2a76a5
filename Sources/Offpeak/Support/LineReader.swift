import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The lines of a stream as the bytes they are, each as soon as it has arrived (a producer that
/// writes a line now and then sees its ids printed as they are committed).
///
/// `readLine` would turn bytes that are not UTF-8 into U+FFFD without a word; a caller of this
/// sees the bytes and can refuse the line, naming it.
///
/// Linear in the stream: each byte is searched for `\n` once (a 10 MB line arriving in 4 KiB
/// reads was searched from its start on every read, 12 billion byte compares). A line longer than
/// `maxBytes` is not kept: it is read to its end and dropped, and `next` says how long it was, so
/// the caller refuses it at its number and a line of garbage costs no more memory than the limit.
struct LineReader {
    /// One line: its bytes without the `\n`, or how long a line over the limit was.
    enum Line: Equatable {
        case bytes(ArraySlice<UInt8>)
        case tooLong(bytes: Int)
    }

    /// Kept so its descriptor stays open while it is read.
    private let handle: FileHandle
    private let maxBytes: Int
    private var buffer: [UInt8] = []
    /// Where the current line starts in `buffer`.
    private var start = 0
    /// Up to where `buffer` has been searched for `\n`: each byte is searched once.
    private var scanned = 0
    /// The bytes of an over-long line dropped so far, while reading to its end.
    private var dropped: Int?
    private var ended = false
    /// What one `read` fills, appended to `buffer` by one copy.
    private var chunk = [UInt8](repeating: 0, count: 65_536)

    /// - Parameter maxBytes: the longest line kept (without its `\n`); `ValueLimits.lineBytes`.
    init(_ handle: FileHandle, maxBytes: Int = ValueLimits.lineBytes) {
        self.handle = handle
        self.maxBytes = maxBytes
    }

    /// The next line; `nil` at the end of the stream.
    /// - Throws: an I/O error (74) when the stream cannot be read.
    mutating func next() throws(OffpeakError) -> Line? {
        while true {
            if let newline = firstNewline() {
                return line(endingAt: newline, next: newline + 1)
            }
            scanned = buffer.count
            if buffer.count - start > maxBytes {
                dropped = (dropped ?? 0) + buffer.count - start
                start = buffer.count
            }
            if ended {
                guard start < buffer.count || dropped != nil else { return nil }
                return line(endingAt: buffer.count, next: buffer.count)
            }
            if start > 0 {
                buffer.removeFirst(start)
                scanned -= start
                start = 0
            }
            try readMore()
        }
    }

    /// The line from `start` to `end` (or its length, with what was dropped of it, when too
    /// long); the next line starts at `next`.
    private mutating func line(endingAt end: Int, next: Int) -> Line {
        let length = end - start + (dropped ?? 0)
        let line = length > maxBytes ? Line.tooLong(bytes: length) : .bytes(buffer[start..<end])
        start = next
        scanned = next
        dropped = nil
        return line
    }

    /// The index of the first `\n` not searched yet, by `memchr`.
    private func firstNewline() -> Int? {
        guard scanned < buffer.count else { return nil }
        return buffer.withUnsafeBufferPointer { bytes -> Int? in
            guard let base = bytes.baseAddress,
                let found = memchr(base + scanned, Int32(UInt8(ascii: "\n")), bytes.count - scanned)
            else { return nil }
            return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// Appends what the stream has now (up to 64 KiB, waiting for at least a byte); sets `ended`
    /// at its end.
    /// - Throws: an I/O error (74) when the stream cannot be read: lines cut short by a failed
    ///   read must not pass for the whole input.
    private mutating func readMore() throws(OffpeakError) {
        var failure: Int32 = 0
        let count = chunk.withUnsafeMutableBytes { bytes in
            let count = Self.read(handle.fileDescriptor, into: bytes)
            if count < 0 { failure = errno }
            return count
        }
        if count < 0 {
            throw OffpeakError(.ioError, "cannot read the input", cause: String(cString: strerror(failure)))
        }
        if count == 0 { ended = true }
        buffer.append(contentsOf: chunk[..<count])
    }

    /// `read(2)` again after a signal; -1 with `errno` set on an error.
    private static func read(_ descriptor: Int32, into bytes: UnsafeMutableRawBufferPointer) -> Int {
        while true {
            let count = Glibc.read(descriptor, bytes.baseAddress, bytes.count)
            if count >= 0 || errno != EINTR { return count }
        }
    }
}
