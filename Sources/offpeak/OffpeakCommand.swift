import ArgumentParser
import Offpeak

/// Every command names itself (`commandName:`): without a name, ArgumentParser derives one from
/// the type with `String(describing:)` for every subcommand on every start, and each of those asks
/// the Swift runtime whether the type conforms to the printing protocols, a scan of every
/// conformance in the process (most of the start-up of a short command like an idle `tick`).
@main
struct OffpeakCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offpeak",
        abstract: "Runs LLM work cheaply: cached, batched, budgeted, and only when conditions allow.",
        discussion: """
            Exit statuses: 0 done, 64 usage, 65 bad input data, 69 provider unavailable or items failed,
            73 a file to create exists or cannot be made (init), 74 the store or outputs cannot be read
            or written, 75 interrupted (run again or wait for the next tick to finish), 78 configuration.
            """,
        version: OffpeakVersion.current,
        subcommands: [
            Init.self, Run.self, Summarize.self, Estimate.self, Submit.self, Result.self, Jobs.self,
            Status.self,
            Batches.self, Hosts.self, Outputs.self, Dashboard.self,
            Costs.self, Audit.self, Cancel.self, Cache.self, Conditions.self, Queue.self, Tick.self,
            Cron.self,
            StoreCommand.self,
        ]
    )
}
