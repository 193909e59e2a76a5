import ArgumentParser
import Foundation
import Offpeak

extension OffpeakCommand {
    struct Run: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "run",
            abstract: "Run a job now: by name (jobs/NAME.yaml) or by path. Resumes its unfinished run.")

        @Argument(help: "The job's name or spec file.")
        var job: String

        @OptionGroup var common: CommonOptions
        @OptionGroup var providerOptions: ProviderOptions
        @OptionGroup var conditions: ConditionOptions
        @OptionGroup var output: OutputOptions

        func run() throws {
            let context = try common.context(
                provider: providerOptions.choice.provider, baseURL: providerOptions.choice.baseURL)
            let spec = try Terminal.attempt { try context.loadJob(job) }
            try RunReporter.execute(
                spec, context: context, options: providerOptions, conditions: conditions, json: output.json)
        }
    }

    struct Summarize: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "summarize",
            abstract: "Summarize text files, one answer per file, as the job 'summarize'.")

        @Argument(help: "Text files to summarize.")
        var files: [String]

        @Option(help: "fast, balanced or powerful.")
        var tier: JobSpec.Tier = .fast

        @Option(help: "Output folder, relative to the workspace (default out/summarize).")
        var out: String?

        @Option(name: .customLong("max-tokens"), help: "Longest answer, in tokens.")
        var maxTokens = 300

        @Flag(
            name: .customLong("no-prompt-cache"),
            help: "Never mark the system prompt for the provider's prompt cache (for proxies that reject it)."
        )
        var noPromptCache = false

        @Flag(help: "Print what summarizing would do and cost, as `offpeak estimate` does; send nothing.")
        var estimate = false

        @Option(help: "How long the summaries may take, like 6h or 2d, as a job's deadline.")
        var deadline: String?

        @Flag(
            name: .customLong("wait-for-cheaper-prices"),
            help: "Where the model's prices change with the clock, start at the cheapest the deadline allows."
        )
        var waitForCheaperPrices = false

        @Option(
            name: .customLong("tag"), help: "A tag the spend is counted under (costs --by tag); repeatable.")
        var tags: [String] = []

        @OptionGroup var common: CommonOptions
        @OptionGroup var providerOptions: ProviderOptions
        @OptionGroup var conditions: ConditionOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            guard !files.isEmpty else { throw ValidationError("name at least one file to summarize") }
            guard maxTokens >= 1 else {
                throw ValidationError("--max-tokens: expected 1 or more, got \(maxTokens)")
            }
            if let deadline, DurationParser.seconds(deadline).map({ $0 > 0 }) != true {
                throw ValidationError("--deadline: expected a duration like 6h or 2d, got '\(deadline)'")
            }
            if waitForCheaperPrices && deadline == nil {
                throw ValidationError("--wait-for-cheaper-prices needs --deadline: how long it may wait")
            }
        }

        func run() throws {
            let context = try common.context(
                provider: providerOptions.choice.provider, baseURL: providerOptions.choice.baseURL)
            if let problem = context.limits(for: tier).outputProblem(maxTokens: maxTokens) {
                Terminal.printError("--max-tokens: \(problem)")
                throw ExitCode(ExitStatus.usage.rawValue)
            }
            let spec = try Terminal.attempt {
                try JobSpec.summarize(
                    files: files, tier: tier, output: out, maxTokens: maxTokens, promptCache: !noPromptCache,
                    workspace: context.workspace, tags: tags,
                    deadline: deadline.flatMap(DurationParser.seconds),
                    waitForCheaperPrices: waitForCheaperPrices)
            }
            if estimate {
                return try EstimateReporter.print(
                    spec, context: context, cachePolicy: providerOptions.cachePolicy, json: output.json)
            }
            try RunReporter.execute(
                spec, context: context, options: providerOptions, conditions: conditions, json: output.json)
        }
    }
}

/// Runs a job and prints what came of it: shared by `run` and `summarize`.
enum RunReporter {
    struct Report: Encodable {
        var run: String
        var job: String
        var state: String
        var reason: String?
        var itemsTotal: Int
        var itemsDone: Int
        var itemsFailed: Int
        var answeredNow: Int
        var output: String
        var spend: Spend
        var deferred: [String]
        var forced: Bool
        /// What the text output's first line says: the verdict, with any notice before it.
        var message: String
    }

    static func execute(
        _ spec: JobSpec, context: WorkspaceContext, options flags: ProviderOptions,
        conditions: ConditionOptions, json: Bool
    )
        throws
    {
        let options = JobRunner.Options(
            force: flags.force, cachePolicy: flags.cachePolicy,
            progress: json ? nil : Terminal.progressLine(),
            gate: context.gate(sysfsRoot: conditions.sysfs.sysfsRoot),
            stop: Signals.stopOnTermination(grace: conditions.grace), waitForBatches: flags.wait,
            now: try flags.now.date())
        let outcome: RunOutcome
        do {
            outcome = try Terminal.attempt { try context.run(spec, options: options) }
        } catch {
            writeMetrics(context)
            throw error
        }
        Terminal.endProgressLine()
        writeMetrics(context)
        let run = outcome.run
        if json {
            try Terminal.printJSON(
                Report(
                    run: run.id, job: run.job, state: run.state.rawValue, reason: run.reason,
                    itemsTotal: run.itemsTotal, itemsDone: run.itemsDone, itemsFailed: run.itemsFailed,
                    answeredNow: outcome.answeredNow, output: outcome.outputDirectory, spend: outcome.spend,
                    deferred: outcome.deferred.map(\.rawValue), forced: run.forced, message: outcome.message))
        } else {
            print(outcome.message)
            let nothingRan = !outcome.deferred.isEmpty && outcome.spend.calls == 0 && outcome.answeredNow == 0
            if nothingRan { throw ExitCode(outcome.status.rawValue) }
            print("outputs: \(outcome.outputDirectory)/")
            print(outcome.spend.costLine)
        }
        if outcome.status != .ok {
            if !json { Terminal.printError(outcome.message) }
            throw ExitCode(outcome.status.rawValue)
        }
    }

    /// Rewrites the metrics file `offpeak.yaml` names, if any; a failure is a warning on stderr,
    /// and the command keeps its exit status.
    static func writeMetrics(_ context: WorkspaceContext) {
        if let warning = context.writeMetrics() { Terminal.printError("warning: \(warning)") }
    }
}
