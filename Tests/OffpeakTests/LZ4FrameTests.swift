import Foundation
import Testing

@testable import Offpeak

/// The LZ4 frame format against itself and against the `lz4` command-line tool.
struct LZ4FrameTests {
    static let lz4Tool = "/usr/bin/lz4"

    /// Seeded English-like text, so frames compress the way cached answers do.
    static func text(_ bytes: Int, seed: UInt64 = 1) -> [UInt8] {
        let words = ["cache", "answer", "the", "of", "batch", "token", "model", "request", "price", "tide"]
        var state = seed
        var text = ""
        while text.utf8.count < bytes {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            text += words[Int(state >> 33) % words.count] + ((state >> 20) % 9 == 0 ? ".\n" : " ")
        }
        return Array(text.utf8.prefix(bytes))
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// Runs the `lz4` tool with `arguments`, returning what it printed.
    static func lz4(_ arguments: [String]) throws -> (status: Int32, output: [UInt8]) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: lz4Tool)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, Array(output))
    }

    static func temporaryFile(_ bytes: [UInt8], suffix: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "offpeak-lz4-\(UUID().uuidString)\(suffix)")
        try Data(bytes).write(to: url)
        return url
    }

    @Test(arguments: [0, 1, 100, 2048, 70_000, 300_000])
    func roundTrips(size: Int) throws {
        let bytes = Self.text(size)
        let frame = LZ4Frame.compress(bytes)
        #expect(try LZ4Frame.decompress(frame) == bytes)
        #expect(Array(frame.prefix(4)) == [0x04, 0x22, 0x4D, 0x18], "the LZ4 frame magic number")
        if size >= 2048 { #expect(frame.count < bytes.count, "text compresses") }
    }

    @Test func incompressibleBytesRoundTrip() throws {
        let bytes = Self.randomBytes(100_000)
        #expect(try LZ4Frame.decompress(LZ4Frame.compress(bytes)) == bytes)
    }

    @Test func framesCarryContentSizeAndChecksum() {
        let frame = LZ4Frame.compress(Self.text(5000))
        let flags = frame[4]
        #expect(flags & 0x08 != 0, "content size present")
        #expect(flags & 0x04 != 0, "content checksum present")
        #expect(flags & 0x20 != 0, "independent blocks")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: lz4Tool)))
    func theLZ4ToolOpensOurFrames() throws {
        let bytes = Self.text(150_000, seed: 7)
        let file = try Self.temporaryFile(LZ4Frame.compress(bytes), suffix: ".lz4")
        defer { try? FileManager.default.removeItem(at: file) }
        let (status, output) = try Self.lz4(["-d", "-c", file.path])
        #expect(status == 0)
        #expect(output == bytes)
        let (testStatus, _) = try Self.lz4(["-t", file.path])
        #expect(testStatus == 0, "lz4 -t verifies the checksum")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: lz4Tool)))
    func weOpenTheLZ4ToolsFrames() throws {
        // The tool writes no content size and linked 4 MB blocks: the decoder must grow its output.
        let bytes = Self.text(200_000, seed: 3)
        let file = try Self.temporaryFile(bytes, suffix: ".txt")
        defer { try? FileManager.default.removeItem(at: file) }
        let (status, frame) = try Self.lz4(["-c", "-f", file.path])
        #expect(status == 0)
        #expect(try LZ4Frame.decompress(frame) == bytes)
        #expect(throws: LZ4Frame.Failure.tooLarge(limit: 100_000)) {
            try LZ4Frame.decompress(frame, maxBytes: 100_000)
        }
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: lz4Tool)))
    func linkedBlocksOfUnknownSizeDecodeAcrossOutputGrowth() throws {
        // 64 KB linked blocks (each refers back to the last), no content size, very compressible: the
        // output buffer is outgrown and moved many times while the frame is decoded.
        let bytes = Array(repeatElement(Self.text(1000, seed: 5), count: 3000).joined())
        let file = try Self.temporaryFile(bytes, suffix: ".txt")
        defer { try? FileManager.default.removeItem(at: file) }
        let (status, frame) = try Self.lz4(["-c", "-f", "-BD", "-B4", file.path])
        #expect(status == 0)
        #expect(frame.count * 4 < bytes.count)
        #expect(try LZ4Frame.decompress(frame) == bytes)
    }

    @Test func aFlippedByteIsCorrupt() {
        let bytes = Self.text(4000)
        var frame = LZ4Frame.compress(bytes)
        frame[frame.count / 2] ^= 0xFF
        #expect {
            try LZ4Frame.decompress(frame)
        } throws: { error in
            guard case LZ4Frame.Failure.corrupt = error else { return false }
            return true
        }
    }

    @Test func aDamagedChecksumIsCorrupt() throws {
        var frame = LZ4Frame.compress(Self.text(4000))
        frame[frame.count - 1] ^= 0x01
        #expect(throws: LZ4Frame.Failure.corrupt("ERROR_contentChecksum_invalid")) {
            try LZ4Frame.decompress(frame)
        }
    }

    @Test func aCutFrameIsTruncated() {
        let frame = LZ4Frame.compress(Self.text(4000))
        for length in [0, 3, 10, frame.count / 2, frame.count - 1] {
            #expect(throws: LZ4Frame.Failure.truncated, "cut at \(length)") {
                try LZ4Frame.decompress(Array(frame.prefix(length)))
            }
        }
    }

    @Test func notAFrameIsCorrupt() {
        #expect {
            try LZ4Frame.decompress(Array("{\"text\": \"plain JSON\"}".utf8))
        } throws: { error in
            guard case LZ4Frame.Failure.corrupt = error else { return false }
            return true
        }
        let frame = LZ4Frame.compress(Self.text(100))
        #expect(throws: LZ4Frame.Failure.corrupt("trailing bytes after the frame")) {
            try LZ4Frame.decompress(frame + [1, 2, 3])
        }
    }

    @Test func contentOverTheLimitIsRefusedBeforeDecoding() {
        let frame = LZ4Frame.compress(Self.text(10_000))
        #expect(throws: LZ4Frame.Failure.tooLarge(limit: 9_999)) {
            try LZ4Frame.decompress(frame, maxBytes: 9_999)
        }
    }

    @Test func anAbandonedFrameDoesNotSpoilTheNextOne() throws {
        // liblz4 1.9.4 remembers how much an abandoned frame still owed, across a reset; a frame
        // without a content size (like an empty one) decoded on that context would then fail.
        let large = LZ4Frame.compress(Self.text(10_000))
        let empty = LZ4Frame.compress([])
        for _ in 0..<20 {
            #expect(throws: LZ4Frame.Failure.tooLarge(limit: 10)) {
                try LZ4Frame.decompress(large, maxBytes: 10)
            }
            #expect(throws: LZ4Frame.Failure.truncated) { try LZ4Frame.decompress(Array(large.prefix(200))) }
            #expect(try LZ4Frame.decompress(empty) == [])
        }
    }
}
