import ArgumentParser
import Foundation
import Offpeak

extension OffpeakCommand {
    struct Estimate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "estimate",
            abstract:
                "What running a job now would do and cost, planned as the run plans it, with nothing sent or written.",
            discussion: """
                Items, answers already cached, batched prompts, long-document chunks, the lane, calls,
                tokens by kind, dollars live, batch and naive, and the expected time from the measured
                latency. The store is only read.
                """)

        @Argument(help: "The job's name or spec file.")
        var job: String

        @OptionGroup var common: CommonOptions
        @OptionGroup var planning: EstimateOptions
        @OptionGroup var output: OutputOptions

        func run() throws {
            let context = try common.context(
                provider: planning.choice.provider, baseURL: planning.choice.baseURL)
            let spec = try Terminal.attempt { try context.loadJob(job) }
            try EstimateReporter.print(
                spec, context: context, cachePolicy: planning.cachePolicy, now: try planning.now.date(),
                json: output.json)
        }
    }
}

/// The flags of an estimate: the provider a run would use, and whether it would read the cache.
struct EstimateOptions: ParsableArguments {
    @OptionGroup var choice: ProviderChoice

    @Flag(name: .customLong("no-cache"), help: "Estimate a run that reads no cached answer.")
    var noCache = false

    @Flag(name: .long, help: "Estimate a run that asks again for every item.")
    var refresh = false

    @OptionGroup var now: NowOption

    func validate() throws {
        if noCache && refresh { throw ValidationError("--no-cache and --refresh are alternatives; give one") }
    }

    var cachePolicy: RequestRecord.CachePolicy { refresh ? .refresh : noCache ? .noCache : .normal }
}

/// Prints an estimate: shared by `estimate` and `summarize --estimate`.
enum EstimateReporter {
    static func print(
        _ spec: JobSpec, context: WorkspaceContext, cachePolicy: RequestRecord.CachePolicy, now: Date? = nil,
        json: Bool
    )
        throws
    {
        let estimate = try Terminal.attempt { try context.estimate(spec, cachePolicy: cachePolicy, now: now) }
        if json { try Terminal.printJSON(estimate) } else { Swift.print(estimate.text, terminator: "") }
    }
}
