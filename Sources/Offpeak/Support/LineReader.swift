import Foundation

/// The lines of a stream as the bytes they are, each as soon as it has arrived (a producer that
/// writes a line now and then sees its ids printed as they are committed).
///
/// `readLine` would turn bytes that are not UTF-8 into U+FFFD without a word; a caller of this
/// sees the bytes and can refuse the line, naming it.
struct LineReader {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var start = 0
    private var ended = false

    init(_ handle: FileHandle) {
        self.handle = handle
    }

    /// The next line without its `\n`; `nil` at the end of the stream.
    mutating func next() -> ArraySlice<UInt8>? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[start..<newline]
                start = newline + 1
                return line
            }
            if ended {
                guard start < buffer.count else { return nil }
                let line = buffer[start...]
                start = buffer.count
                return line
            }
            if start > 0 {
                buffer.removeFirst(start)
                start = 0
            }
            let chunk = handle.availableData
            if chunk.isEmpty { ended = true } else { buffer.append(contentsOf: chunk) }
        }
    }
}
