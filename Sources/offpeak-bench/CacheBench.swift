import Foundation
import Logging
import Offpeak

/// Fills a fresh workspace's `ResponseCache` with answers, then times random hit lookups through
/// `answer(for:)`, hit counting included: once with each key at hand, and once computing it from the
/// item's request first (`RequestPlanner.cacheKey`: canonical JSON and SHA-256), as a run does.
struct CacheBench {
    struct Options {
        var entries: Int
        var lookups: Int
        var payloadBytes: Int
        var rounds: Int
        var seed: UInt64
        var directory: String
        /// Where to write the keys and texts (JSON lines), so another cache can be filled alike.
        var textsOut: String?
    }

    struct Report: Encodable {
        var entries: Int
        var lookups: Int
        var rounds: Int
        var averageTextBytes: Int
        var rawBytes: Int
        var storedBytes: Int
        var fillSeconds: Double
        var roundSeconds: [Double]
        var medianSeconds: Double
        var lookupsPerSecond: Double
        var microsecondsPerLookup: Double
        /// The same lookups, each computing its key from the item's request first.
        var keyedRoundSeconds: [Double]
        var keyedLookupsPerSecond: Double
        /// SHA-256 alone over each lookup's request text (about `payloadBytes` bytes), median round.
        var hashMicroseconds: Double
        /// The cache key alone (`RequestPlanner.cacheKey`: canonical JSON and SHA-256) of each
        /// lookup's request, median round: what "key from the request" adds, before its effect on
        /// the lookup (the requests' text sharing the CPU caches with the database's pages).
        var keyMicroseconds: Double
        var misses: Int
        var hitsCounted: Int
        /// Writing the hit counts still pending after the rounds (hits are counted in memory and
        /// written in batches; the rounds may not include a batch).
        var flushSeconds: Double
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let options: Options

    init(_ options: Options) { self.options = options }

    func run() throws -> Report {
        let root = URL(fileURLWithPath: options.directory, isDirectory: true)
        let workspace = Workspace(root: root)
        // A fresh cache every time: an old database would make the fill an update.
        try? FileManager.default.removeItem(at: workspace.cacheDirectory)
        let store = try Store.open(workspace)
        let cache = ResponseCache(store: store, maxBytes: 1 << 40, logger: Logger(label: "offpeak-bench"))

        var random = SampleText(seed: options.seed)
        let texts = (0..<options.entries).map { _ in random.paragraph(bytes: options.payloadBytes) }
        let requests = (0..<options.entries).map { _ in
            CompletionRequest(
                model: "claude-haiku-4-5", system: "You answer support tickets in one line.",
                messages: [ChatMessage(role: .user, content: random.paragraph(bytes: options.payloadBytes))],
                maxTokens: 120, temperature: 0)
        }
        let keys = requests.map { RequestPlanner.cacheKey(provider: .sim, request: $0) }
        if let path = options.textsOut { try export(keys: keys, texts: texts, to: path) }

        let fillStart = ContinuousClock.now
        for chunk in stride(from: 0, to: options.entries, by: 500) {
            let answers = (chunk..<min(chunk + 500, options.entries)).map { index in
                let tokens = texts[index].utf8.count / 4
                return (
                    key: keys[index],
                    answer: CachedAnswer(
                        text: texts[index], model: "claude-haiku-4-5", finishReason: "end_turn",
                        inputTokens: 300, outputTokens: tokens, dollars: Double(tokens) * 5e-6,
                        naiveDollars: Double(tokens) * 5e-6 + 300e-6)
                )
            }
            try cache.save(answers: answers, job: "bench", provider: "sim", ttl: 86_400)
        }
        let fillSeconds = Self.seconds(ContinuousClock.now - fillStart)

        let order = (0..<options.lookups).map { _ in random.below(options.entries) }
        var roundSeconds: [Double] = []
        var misses = 0
        for _ in 0..<options.rounds {
            let start = ContinuousClock.now
            for index in order where try cache.answer(for: keys[index]) == nil {
                misses += 1
            }
            roundSeconds.append(Self.seconds(ContinuousClock.now - start))
        }
        var keyedRoundSeconds: [Double] = []
        for _ in 0..<options.rounds {
            let start = ContinuousClock.now
            for index in order
            where try cache.answer(for: RequestPlanner.cacheKey(provider: .sim, request: requests[index]))
                == nil
            {
                misses += 1
            }
            keyedRoundSeconds.append(Self.seconds(ContinuousClock.now - start))
        }
        let hashMicroseconds = hashTime(requests.map { $0.messages[0].content }, order: order)
        let keyMicroseconds = keyTime(requests, order: order)
        let flushStart = ContinuousClock.now
        try cache.flush()
        let flushSeconds = Self.seconds(ContinuousClock.now - flushStart)
        if misses > 0 { throw Failure(description: "\(misses) lookups missed; every lookup should hit") }

        let stats = try cache.stats()
        let median = Self.median(roundSeconds)
        return Report(
            entries: options.entries, lookups: options.lookups, rounds: options.rounds,
            averageTextBytes: texts.reduce(0) { $0 + $1.utf8.count } / max(1, texts.count),
            rawBytes: stats.rawBytes, storedBytes: stats.storedBytes, fillSeconds: fillSeconds,
            roundSeconds: roundSeconds, medianSeconds: median,
            lookupsPerSecond: Double(options.lookups) / median,
            microsecondsPerLookup: median * 1e6 / Double(options.lookups),
            keyedRoundSeconds: keyedRoundSeconds,
            keyedLookupsPerSecond: Double(options.lookups) / Self.median(keyedRoundSeconds),
            hashMicroseconds: hashMicroseconds, keyMicroseconds: keyMicroseconds, misses: misses,
            hitsCounted: stats.hitsTotal, flushSeconds: flushSeconds)
    }

    /// Microseconds to hash one text, median of the rounds (each hashes the texts in lookup order).
    private func hashTime(_ texts: [String], order: [Int]) -> Double {
        var rounds: [Double] = []
        var checksum = 0
        for _ in 0..<options.rounds {
            let start = ContinuousClock.now
            for index in order { checksum &+= SHA256.hex(texts[index]).utf8.count }
            rounds.append(Self.seconds(ContinuousClock.now - start))
        }
        precondition(checksum > 0)
        return Self.median(rounds) * 1e6 / Double(max(1, order.count))
    }

    /// Microseconds to compute one request's cache key, median of the rounds (each keys the
    /// requests in lookup order).
    private func keyTime(_ requests: [CompletionRequest], order: [Int]) -> Double {
        var rounds: [Double] = []
        var checksum = 0
        for _ in 0..<options.rounds {
            let start = ContinuousClock.now
            for index in order {
                checksum &+= RequestPlanner.cacheKey(provider: .sim, request: requests[index]).utf8.count
            }
            rounds.append(Self.seconds(ContinuousClock.now - start))
        }
        precondition(checksum > 0)
        return Self.median(rounds) * 1e6 / Double(max(1, order.count))
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    private func export(keys: [String], texts: [String], to path: String) throws {
        var lines = Data()
        for (key, text) in zip(keys, texts) {
            lines.append(try JSONEncoder().encode(["key": key, "text": text]))
            lines.append(0x0A)
        }
        try lines.write(to: URL(fileURLWithPath: path))
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }
}
