import Foundation

/// `offpeak submit`: JSON lines from a file (stdin), each parsed, committed in chunks, and
/// reported in line order once committed — a request id, or why the line was refused.
public struct SubmissionStream: Sendable {
    let queue: SubmissionQueue
    let spec: JobSpec
    /// Lines are committed in chunks: one transaction per chunk keeps 10,000 lines fast.
    let chunk: Int

    /// - Throws: a data error (65) when the job does not take submissions.
    init(queue: SubmissionQueue, spec: JobSpec, chunk: Int = 500) throws(OffpeakError) {
        try Self.check(spec)
        self.queue = queue
        self.spec = spec
        self.chunk = chunk
    }

    /// - Throws: a data error (65) when `spec`'s job does not take submissions.
    static func check(_ spec: JobSpec) throws(OffpeakError) {
        guard spec.acceptsSubmissions else {
            throw OffpeakError(
                .dataError, "job \(spec.name) does not take submissions; add 'queue: true' to its spec")
        }
    }

    /// Reads every line of `input` (named `source` in messages: `stdin:12`).
    /// - Parameter report: called for each non-blank line, in order, once its chunk is committed.
    /// - Returns: how many lines were refused.
    public func submit(
        from input: FileHandle, source: String = "stdin", report: (Result<String, OffpeakError>) -> Void
    ) throws(OffpeakError) -> Int {
        var pending: [Result<Submission, OffpeakError>] = []
        var refused = 0
        func flush() throws(OffpeakError) {
            let accepted = pending.compactMap { try? $0.get() }
            var outcomes = try queue.submit(accepted, source: .submit).makeIterator()
            for line in pending {
                let outcome = line.flatMap { _ in outcomes.next() ?? .failure(OffpeakError(.software, "lost"))
                }
                if case .failure = outcome { refused += 1 }
                report(outcome)
            }
            pending.removeAll(keepingCapacity: true)
        }
        var number = 0
        var lines = LineReader(input)
        while true {
            let next: LineReader.Line?
            do {
                next = try lines.next()
            } catch {
                try flush()  // the lines read before the failure are committed and reported
                throw error
            }
            guard let line = next else { break }
            number += 1
            let location = "\(source):\(number)"
            do throws(OffpeakError) {
                switch line {
                case .tooLong(let bytes): throw Submission.tooLong(bytes: bytes, location: location)
                case .bytes(let bytes):
                    guard let submission = try Submission.parse(line: bytes, location: location, spec: spec)
                    else { continue }
                    pending.append(.success(submission))
                }
            } catch {
                pending.append(.failure(error))
            }
            if pending.count >= chunk { try flush() }
        }
        try flush()
        return refused
    }
}
