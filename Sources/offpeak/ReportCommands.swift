import ArgumentParser
import Foundation
import Offpeak

extension OffpeakCommand {
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract:
                "Recent runs: their state, what each has done and spent, and why it stopped; spend today.",
            discussion: """
                With a run's id: that run alone, its requests by state (how many, the first few of \
                each, and why they failed or wait), its provider batches out, the batch audit of its \
                job and where its outputs are.
                """)

        @Argument(help: "A run's id (offpeak status lists them).")
        var runID: String?

        @Option(help: "How many runs to show.")
        var limit = 20

        @OptionGroup var common: CommonOptions
        @OptionGroup var output: OutputOptions

        func run() throws {
            let context = try common.context()
            if let runID {
                let report = try Terminal.attempt { try context.run(id: runID) }
                if output.json { try Terminal.printJSON(report) } else { print(report.text, terminator: "") }
                return
            }
            let report = try Terminal.attempt { try context.status(limit: limit) }
            if output.json { try Terminal.printJSON(report) } else { print(report.text, terminator: "") }
        }
    }

    struct Costs: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "costs",
            abstract: "What was spent, by job, model or day, against what the naive way would have cost.")

        @Option(help: "job, model, day or tag.")
        var by: CostReport.Grouping = .job

        @OptionGroup var common: CommonOptions
        @OptionGroup var output: OutputOptions

        func run() throws {
            let context = try common.context()
            let report = try Terminal.attempt {
                try context.costs(by: by)
            }
            if output.json { try Terminal.printJSON(report) } else { print(report.text, terminator: "") }
        }
    }

    struct Batches: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "batches",
            abstract:
                "Provider batches still out (or with --all every one), as the provider last described them.",
            discussion: "Reads the store only: the provider is asked by the ticks that poll, never here.")

        @Flag(help: "Collected and failed batches too, most recent first.")
        var all = false

        @Option(help: "With --all, how many batches to show.")
        var limit = BatchReport.defaultLimit

        @OptionGroup var common: CommonOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            guard limit >= 1 else { throw ValidationError("--limit: expected 1 or more, got \(limit)") }
        }

        func run() throws {
            let context = try common.context()
            let report = try Terminal.attempt {
                try BatchReport.make(store: try context.openStoreForReading(), all: all, limit: limit)
            }
            if output.json { try Terminal.printJSON(report) } else { print(report.text, terminator: "") }
        }
    }

    struct Hosts: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "hosts",
            abstract:
                "Hosts that tick against the store: version, last tick and its exit status, runs held, calls in flight, conditions.",
            discussion:
                "A host is named by OFFPEAK_HOST, else host: in offpeak.yaml, else its hostname; each tick records it."
        )

        @OptionGroup var common: CommonOptions
        @OptionGroup var output: OutputOptions

        func run() throws {
            let context = try common.context()
            let report = try Terminal.attempt { try context.hosts() }
            if output.json { try Terminal.printJSON(report) } else { print(report.text, terminator: "") }
        }
    }

    struct Jobs: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "jobs",
            abstract: "List or validate the workspace's job specs.", subcommands: [List.self, Validate.self],
            defaultSubcommand: List.self)

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "ls", abstract: "List the job specs.")

            @OptionGroup var common: CommonOptions
            @OptionGroup var output: OutputOptions

            func run() throws {
                let context = try common.context()
                let report = JobListReport(
                    try Terminal.attempt { try JobCatalog.load(workspace: context.workspace.root) })
                if output.json { try Terminal.printJSON(report) } else { print(report.text, terminator: "") }
            }
        }

        struct Validate: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "validate",
                abstract: "Check every spec (or the ones named); print each error as file:line:column.")

            @Argument(help: "Jobs to check (default: every spec in jobs/).")
            var jobs: [String] = []

            @OptionGroup var common: CommonOptions

            func run() throws {
                let context = try common.context()
                let catalog = try Terminal.attempt {
                    try JobCatalog.load(workspace: context.workspace.root, named: jobs)
                }
                for entry in catalog.entries {
                    switch entry.spec {
                    case .success: print(entry.validatedLine ?? "")
                    case .failure(let error): Terminal.printError(error.description)
                    }
                }
                if !catalog.errors.isEmpty { throw ExitCode(ExitStatus.dataError.rawValue) }
            }
        }
    }
}
