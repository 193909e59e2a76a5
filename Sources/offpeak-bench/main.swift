import Foundation

/// `offpeak-bench`: micro-benchmarks of offpeak's library, each printing one JSON object.
///
///     offpeak-bench cache --entries 10000 --lookups 100000 --payload-bytes 2048 --dir DIR
///     offpeak-bench lz4 samples/*.md
///
/// `bench/cache_bench.py` runs both and compares the first with Python's diskcache.
let usage = """
    usage: offpeak-bench cache [--entries N] [--lookups N] [--payload-bytes N] [--rounds N] [--seed N]
                               --dir DIR [--texts-out FILE]
           offpeak-bench lz4 [--runs N] FILE...
    """

func fail(_ message: String, status: Int32 = 64) -> Never {
    FileHandle.standardError.write(Data("offpeak-bench: \(message)\n".utf8))
    exit(status)
}

func printJSON(_ value: some Encodable) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.keyEncodingStrategy = .convertToSnakeCase
    do {
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    } catch {
        fail("cannot encode the result: \(error)", status: 70)
    }
}

var arguments = BenchArguments(Array(CommandLine.arguments.dropFirst()))
switch arguments.command {
case "cache":
    guard let directory = arguments.string("--dir") else { fail("cache: --dir DIR is required\n\(usage)") }
    let options = CacheBench.Options(
        entries: arguments.int("--entries", default: 10_000),
        lookups: arguments.int("--lookups", default: 100_000),
        payloadBytes: arguments.int("--payload-bytes", default: 2048),
        rounds: arguments.int("--rounds", default: 5),
        seed: UInt64(arguments.int("--seed", default: 42)),
        directory: directory,
        textsOut: arguments.string("--texts-out"))
    arguments.expectNoMore()
    do {
        printJSON(try CacheBench(options).run())
    } catch {
        fail("cache: \(error)", status: 70)
    }
case "lz4":
    let runs = arguments.int("--runs", default: 15)
    let files = arguments.remaining()
    if files.isEmpty { fail("lz4: name at least one file\n\(usage)") }
    printJSON(LZ4Bench(files: files, runs: runs).run())
case "-h", "--help", "help":
    print(usage)
default:
    fail(usage)
}
