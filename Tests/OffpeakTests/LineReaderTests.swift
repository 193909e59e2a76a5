import Foundation
import Testing

@testable import Offpeak

/// Lines of a stream read in one pass, and lines over the limit dropped and measured (issue 21,
/// item 3).
struct LineReaderTests {
    /// Every line of `input`, read from a pipe written by another thread in `write`-byte pieces.
    static func lines(_ input: [UInt8], maxBytes: Int, write: Int = 4_096) throws -> [LineReader.Line] {
        let pipe = Pipe()
        let writer = pipe.fileHandleForWriting
        Thread.detachNewThread {
            var offset = 0
            while offset < input.count {
                let end = min(offset + write, input.count)
                writer.write(Data(input[offset..<end]))
                offset = end
            }
            try? writer.close()
        }
        var reader = LineReader(pipe.fileHandleForReading, maxBytes: maxBytes)
        var lines: [LineReader.Line] = []
        while let line = try reader.next() { lines.append(line) }
        return lines
    }

    static func bytes(_ text: String) -> LineReader.Line { .bytes(ArraySlice(text.utf8)) }

    @Test func linesAreTheBytesBetweenNewlinesAndTheLastNeedsNone() throws {
        #expect(
            try Self.lines(Array("a\n\nbc\r\nd".utf8), maxBytes: 10)
                == ["a", "", "bc\r", "d"].map(Self.bytes))
        #expect(try Self.lines(Array("a\n".utf8), maxBytes: 10) == [Self.bytes("a")])
        #expect(try Self.lines([], maxBytes: 10) == [])
    }

    /// A line of the limit is kept; one byte more is dropped and measured, and the lines around it
    /// are read as ever: within one read, across many reads, and at the end of the stream.
    @Test func aLineOverTheLimitIsMeasuredAndTheLinesAroundItKept() throws {
        let long = String(repeating: "x", count: 200_000)
        let input = "abcd\nabcde\n\(long)\nafter\n\(long)y"
        #expect(
            try Self.lines(Array(input.utf8), maxBytes: 4)
                == [
                    Self.bytes("abcd"), .tooLong(bytes: 5), .tooLong(bytes: 200_000), .tooLong(bytes: 5),
                    .tooLong(bytes: 200_001),
                ])
        #expect(
            try Self.lines(Array(input.utf8), maxBytes: 100_000)
                == [
                    Self.bytes("abcd"), Self.bytes("abcde"), .tooLong(bytes: 200_000), Self.bytes("after"),
                    .tooLong(bytes: 200_001),
                ])
    }

    /// Before, each 4 KiB read searched the line from its start again: a 10 MB line took minutes in
    /// a debug build. The ceiling is a hang guard, far above the linear reader's time.
    @Test(.timeLimit(.minutes(1))) func aTenMegabyteLineInSmallPiecesIsReadInOnePass() throws {
        let line = [UInt8](repeating: UInt8(ascii: "w"), count: 10_000_000)
        let started = Date()
        let lines = try Self.lines(line + Array("\nend".utf8), maxBytes: 32 << 20)
        #expect(lines == [.bytes(line[...]), Self.bytes("end")])
        #expect(Date().timeIntervalSince(started) < 30)
    }
}
