import ArgumentParser
import Foundation
import Offpeak

extension OffpeakCommand {
    struct Submit: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Queue requests for a job from JSON lines on stdin; print one request id per line.",
            discussion: """
                Each line: {"id": "mine-1", "vars": {"item": "..."}, "tier": "fast"} fills the job's template;
                {"prompt": "..."} is sent as it is. A bad line is reported with its number on stderr; the good
                lines around it still go in. Ids are printed once their requests are committed. The job's next
                run (or tick) answers them.
                """)

        @Option(help: "The job (its spec must say 'queue: true').")
        var job: String

        @OptionGroup var common: CommonOptions

        /// Lines are committed in chunks: one transaction per chunk keeps 10,000 lines fast.
        static let chunk = 500

        func run() throws {
            let context = try common.context()
            let spec = try Terminal.attempt { try context.loadJob(job) }
            guard spec.acceptsSubmissions else {
                Terminal.printError(
                    "job \(spec.name) does not take submissions; add 'queue: true' to its spec")
                throw ExitCode(ExitStatus.dataError.rawValue)
            }
            let queue = SubmissionQueue(
                store: try Terminal.attempt { try context.openStore() }, spec: spec, config: context.config)
            // Each line's submission or why it was refused, reported in line order once committed.
            var pending: [Swift.Result<Submission, OffpeakError>] = []
            var bad = 0
            func flush() throws {
                let accepted = pending.compactMap { try? $0.get() }
                var outcomes = try Terminal.attempt({ try queue.submit(accepted, source: "submit") })
                    .makeIterator()
                for line in pending {
                    switch line.flatMap({ _ in outcomes.next() ?? .failure(OffpeakError(.software, "lost")) })
                    {
                    case .success(let id): print(id)
                    case .failure(let error):
                        bad += 1
                        Terminal.printError(error.description)
                    }
                }
                pending.removeAll(keepingCapacity: true)
            }
            var number = 0
            var lines = LineReader(FileHandle.standardInput)
            while let line = lines.next() {
                number += 1
                do {
                    guard
                        let submission = try Submission.parse(
                            line: line, location: "stdin:\(number)", spec: spec)
                    else { continue }
                    pending.append(.success(submission))
                } catch {
                    pending.append(.failure(error))
                }
                if pending.count >= Self.chunk { try flush() }
            }
            try flush()
            if bad > 0 { throw ExitCode(ExitStatus.dataError.rawValue) }
        }
    }

    struct Result: ParsableCommand {
        static let configuration = CommandConfiguration(
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

        struct Report: Encodable {
            var id: String
            var job: String
            var run: String
            var state: String
            var answer: String?
            var error: String?
        }

        func run() throws {
            let context = try common.context()
            let store = try Terminal.attempt { try context.openStoreForReading() }
            let deadline = Date() + timeout
            while true {
                guard let (request, result) = try Terminal.attempt({ try store.request(id: id) }) else {
                    Terminal.printError("no request with id \(id)")
                    throw ExitCode(ExitStatus.dataError.rawValue)
                }
                let finished = result != nil || request.state == .failed
                if finished || !wait || Date() >= deadline {
                    try report(request, result)
                    return
                }
                Thread.sleep(forTimeInterval: 0.25)
            }
        }

        private func report(_ request: RequestRecord, _ result: ResultRecord?) throws {
            let report = Report(
                id: request.id, job: request.job, run: request.runId, state: request.state.rawValue,
                answer: result?.text, error: request.error)
            if output.json {
                try Terminal.printJSON(report)
            } else if let answer = result?.text {
                print(answer)
            } else {
                let why =
                    request.error.map { ": \($0)" } ?? ": waiting for the next run of job \(request.job)"
                Terminal.printError("\(request.id) is \(request.state.rawValue)\(why)")
            }
            if result != nil { return }
            throw ExitCode((request.state == .failed ? ExitStatus.unavailable : .temporaryFailure).rawValue)
        }
    }
}
