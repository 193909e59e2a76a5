import ArgumentParser
import Foundation
import Offpeak

extension OffpeakCommand {
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Recent runs: their state, what each has done and spent, and why it stopped; spend today.")

        @Option(help: "How many runs to show.")
        var limit = 20

        @OptionGroup var common: CommonOptions
        @OptionGroup var output: OutputOptions

        func run() throws {
            let context = try common.context()
            let report = try Terminal.attempt {
                try StatusReport.make(store: try context.openStoreForReading(), limit: limit)
            }
            if output.json { try Terminal.printJSON(report) } else { print(report.text, terminator: "") }
        }
    }

    struct Costs: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "What was spent, by job, model or day, against what the naive way would have cost.")

        @Option(help: "job, model or day.")
        var by: CostReport.Grouping = .job

        @OptionGroup var common: CommonOptions
        @OptionGroup var output: OutputOptions

        func run() throws {
            let context = try common.context()
            let report = try Terminal.attempt {
                try CostReport.make(store: try context.openStoreForReading(), by: by)
            }
            if output.json { try Terminal.printJSON(report) } else { print(report.text, terminator: "") }
        }
    }

    struct Jobs: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List or validate the workspace's job specs.", subcommands: [List.self, Validate.self],
            defaultSubcommand: List.self)

        struct List: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "ls", abstract: "List the job specs.")

            @OptionGroup var common: CommonOptions
            @OptionGroup var output: OutputOptions

            struct Line: Encodable {
                var name: String
                var file: String
                var kind: String?
                var items: Int?
                var schedule: String?
                var error: String?
            }

            func run() throws {
                let context = try common.context()
                let lines = JobSpecParser.specFiles(in: context.workspace.root).map { url -> Line in
                    let file = context.workspace.displayPath(url)
                    do {
                        let spec = try JobSpecParser.load(path: url, workspace: context.workspace.root)
                        return Line(
                            name: spec.name, file: file, kind: spec.kind.rawValue, items: spec.items.count,
                            schedule: spec.schedule)
                    } catch {
                        return Line(
                            name: url.deletingPathExtension().lastPathComponent, file: file, error: "\(error)"
                        )
                    }
                }
                if output.json { return try Terminal.printJSON(lines) }
                let table = TextTable(columns: ["JOB", "KIND", "ITEMS", "SCHEDULE", "FILE"])
                for line in lines {
                    table.add([
                        line.name, line.kind ?? "invalid", line.items.map(String.init) ?? "-",
                        line.schedule ?? "-",
                        line.file,
                    ])
                }
                print(table.render(), terminator: "")
            }
        }

        struct Validate: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Check every spec (or the ones named); print each error as file:line:column.")

            @Argument(help: "Jobs to check (default: every spec in jobs/).")
            var jobs: [String] = []

            @OptionGroup var common: CommonOptions

            func run() throws {
                let context = try common.context()
                let root = context.workspace.root
                var failures = 0
                var files: [URL] = []
                if jobs.isEmpty {
                    files = JobSpecParser.specFiles(in: root)
                } else {
                    for job in jobs {
                        files.append(try Terminal.attempt { try JobSpecParser.resolve(job, workspace: root) })
                    }
                }
                for url in files {
                    do {
                        let spec = try JobSpecParser.load(path: url, workspace: root)
                        print(
                            "ok  \(context.workspace.displayPath(url)) (\(spec.name): \(spec.items.count) items)"
                        )
                    } catch {
                        failures += 1
                        Terminal.printError(error.description)
                    }
                }
                if failures > 0 { throw ExitCode(ExitStatus.dataError.rawValue) }
            }
        }
    }
}
