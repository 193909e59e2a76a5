import ArgumentParser
import Foundation
import Offpeak

extension OffpeakCommand {
    struct Submit: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "submit",
            abstract: "Queue requests for a job from JSON lines on stdin; print one request id per line.",
            discussion: """
                Each line: {"id": "mine-1", "vars": {"item": "..."}, "tier": "fast"} fills the job's template;
                {"prompt": "..."} is sent as it is. A bad line is reported with its number on stderr; the good
                lines around it still go in. A line may hold at most 32 MiB. Ids are printed once their requests
                are committed. The job's next run (or tick) answers them.
                """)

        @Option(help: "The job (its spec must say 'queue: true').")
        var job: String

        @OptionGroup var common: CommonOptions

        func run() throws {
            let context = try common.context()
            let refused = try Terminal.attempt {
                try context.submissionStream(job: job).submit(from: FileHandle.standardInput) {
                    switch $0 {
                    case .success(let id): print(id)
                    case .failure(let error): Terminal.printError(error.description)
                    }
                }
            }
            if refused > 0 { throw ExitCode(ExitStatus.dataError.rawValue) }
        }
    }

    struct Result: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "result",
            abstract: "Print a request's answer, or its state and why it has none yet.",
            discussion:
                "Exit 0 with the answer; 75 while it is pending (or --wait timed out); 69 if it failed.")

        @Argument(help: "The request id printed by `offpeak submit`.")
        var id: String

        @Flag(help: "Wait until the request is answered or failed.")
        var wait = false

        @Option(help: "With --wait: give up after this many seconds.")
        var timeout: Double = 600

        @OptionGroup var common: CommonOptions
        @OptionGroup var output: OutputOptions

        func run() throws {
            let context = try common.context()
            let answer = try Terminal.attempt {
                try RequestAnswer.look(
                    up: id, in: try context.openStoreForReading(), wait: wait, timeout: timeout)
            }
            if output.json {
                try Terminal.printJSON(answer)
            } else if let text = answer.answer {
                print(text)
            } else if let why = answer.explanation {
                Terminal.printError(why)
            }
            if answer.status != .ok { throw ExitCode(answer.status.rawValue) }
        }
    }
}
