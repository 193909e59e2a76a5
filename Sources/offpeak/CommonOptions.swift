import ArgumentParser
import Foundation
import Logging
import Offpeak

/// Flags every command takes.
struct CommonOptions: ParsableArguments {
    @Option(name: .long, help: "The workspace folder (default: $OFFPEAK_WORKSPACE, else the current folder).")
    var workspace: String?

    @Flag(name: .shortAndLong, help: "Log what offpeak does to stderr.")
    var verbose = false

    var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// Sets up logging (once) and returns the workspace's context.
    func context(provider: ProviderKind? = nil, baseURL: String? = nil) throws -> WorkspaceContext {
        let environment = environment  // read once: each read copies the whole environment
        let logger = Terminal.bootstrapLogging(verbose: verbose, environment: environment)
        return try Terminal.attempt {
            try WorkspaceContext(
                workspace: Workspace.resolve(workspace, environment: environment), environment: environment,
                logger: logger, provider: provider, baseURL: baseURL)
        }
    }
}

/// Flags of the commands that report: `--json`.
struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Print JSON instead of text.")
    var json = false
}

/// Which provider, at which URL: `--provider` and `--base-url`, for the commands that call one and
/// for `estimate`, which plans as a run on it would.
struct ProviderChoice: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp("The provider to call: \(ProviderKind.names) (overrides offpeak.yaml)."))
    var provider: ProviderKind?

    @Option(
        name: .customLong("base-url"),
        help: "The provider's base URL (overrides offpeak.yaml and the environment).")
    var baseURL: String?
}

/// Flags of the commands that call a provider.
struct ProviderOptions: ParsableArguments {
    @OptionGroup var choice: ProviderChoice

    @Flag(name: .long, help: "Run even when the job's conditions do not hold.")
    var force = false

    @Flag(
        name: .customLong("no-cache"), help: "Don't read answers from the cache (new answers are still kept)."
    )
    var noCache = false

    @Flag(name: .long, help: "Ask the provider again for every item and replace the cached answers.")
    var refresh = false

    @Flag(
        name: .long,
        help:
            "Stay until the job's provider batches are collected (without it, a batch-lane run submits and exits 75)."
    )
    var wait = false

    /// The moment the run takes as now for its prices, cache and budgets, going on at the machine's pace.
    @OptionGroup var now: NowOption

    func validate() throws {
        if noCache && refresh { throw ValidationError("--no-cache and --refresh are alternatives; give one") }
    }

    var cachePolicy: RequestRecord.CachePolicy { refresh ? .refresh : noCache ? .noCache : .normal }
}

/// Where the machine's conditions are read: `--sysfs-root`.
struct SysfsOptions: ParsableArguments {
    @Option(
        name: .customLong("sysfs-root"),
        help: "The sysfs folder conditions are read from (default: $OFFPEAK_SYSFS_ROOT, else /sys).")
    var sysfsRoot: String?
}

/// Flags of the commands that run work: where conditions are read, and how a stop is handled.
struct ConditionOptions: ParsableArguments {
    @OptionGroup var sysfs: SysfsOptions

    @Option(
        name: .customLong("grace"),
        help:
            "Seconds calls in flight may take to finish after SIGTERM, SIGINT or SIGHUP before they are cut off (0 to 3600)."
    )
    var grace: Double = 10

    func validate() throws {
        guard grace >= 0, grace <= ValueLimits.grace else {
            throw ValidationError(
                "--grace: expected seconds from 0 to \(Int(ValueLimits.grace)), got \(grace)")
        }
    }
}

extension ProviderKind: ExpressibleByArgument {}
extension JobSpec.Tier: ExpressibleByArgument {}
extension CostReport.Grouping: ExpressibleByArgument {}

/// `--now`: the moment a command takes as now (hidden). Tests and the docs' examples move the clock
/// with it: a tick's schedules, the store's horizon, and the prices that change with the clock
/// (`run`, `estimate`).
struct NowOption: ParsableArguments {
    @Option(help: .hidden)
    var now: String?

    /// `--now` read in the local zone, or nil for the machine's clock.
    func date() throws -> Date? {
        try Terminal.attempt {
            try now.map { text throws(OffpeakError) in
                try OffpeakCommand.Cron.Next.date(text, in: .current, option: "--now")
            }
        }
    }
}
