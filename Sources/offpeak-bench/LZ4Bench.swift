import Foundation
import Offpeak

/// LZ4 frame compression of real files: ratio, and compress/decompress throughput (median of runs).
struct LZ4Bench {
    struct FileReport: Encodable {
        var file: String
        var bytes: Int
        var compressedBytes: Int
        var ratio: Double
        var compressMBPerSecond: Double
        var decompressMBPerSecond: Double
    }

    struct Report: Encodable {
        var files: [FileReport]
        var bytes: Int
        var compressedBytes: Int
        var ratio: Double
        /// Over all files together: total bytes over the summed median times.
        var compressMBPerSecond: Double
        var decompressMBPerSecond: Double
        var runs: Int
    }

    let files: [String]
    let runs: Int

    func run() -> Report {
        var reports: [FileReport] = []
        var compressTime = 0.0
        var decompressTime = 0.0
        for path in files {
            guard let data = FileManager.default.contents(atPath: path) else {
                fail("lz4: cannot read \(path)", status: 66)
            }
            let bytes = [UInt8](data)
            let frame = LZ4Frame.compress(bytes)
            guard (try? LZ4Frame.decompress(frame)) == bytes else {
                fail("lz4: \(path) does not survive a round trip", status: 70)
            }
            // Enough repetitions per run that one run takes about a millisecond or more.
            let repetitions = max(1, 1_000_000 / max(1, bytes.count))
            let compress =
                median { for _ in 0..<repetitions { _ = LZ4Frame.compress(bytes) } } / Double(repetitions)
            let decompress =
                median { for _ in 0..<repetitions { _ = try? LZ4Frame.decompress(frame) } }
                / Double(repetitions)
            compressTime += compress
            decompressTime += decompress
            reports.append(
                FileReport(
                    file: path, bytes: bytes.count, compressedBytes: frame.count,
                    ratio: Double(bytes.count) / Double(frame.count),
                    compressMBPerSecond: Double(bytes.count) / compress / 1e6,
                    decompressMBPerSecond: Double(bytes.count) / decompress / 1e6))
        }
        let total = reports.reduce(0) { $0 + $1.bytes }
        let compressed = reports.reduce(0) { $0 + $1.compressedBytes }
        return Report(
            files: reports, bytes: total, compressedBytes: compressed,
            ratio: Double(total) / Double(max(1, compressed)),
            compressMBPerSecond: Double(total) / compressTime / 1e6,
            decompressMBPerSecond: Double(total) / decompressTime / 1e6, runs: runs)
    }

    /// The median wall time of `runs` calls of `body`, in seconds.
    private func median(_ body: () -> Void) -> Double {
        var times: [Double] = []
        for _ in 0..<runs {
            let start = ContinuousClock.now
            body()
            times.append(CacheBench.seconds(ContinuousClock.now - start))
        }
        return times.sorted()[times.count / 2]
    }
}
