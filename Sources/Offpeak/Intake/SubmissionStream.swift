import Foundation

/// `offpeak submit`: JSON lines from a file (stdin), each parsed, committed in chunks, and
/// reported in line order once committed — a request id, or why the line was refused. A chunk
/// commits on a thread of its own while the next one is read and parsed: on a PostgreSQL store most
/// of a chunk's time is the server's, on SQLite the second core's.
public struct SubmissionStream: Sendable {
    let queue: SubmissionQueue
    let spec: JobSpec
    /// Lines are committed in chunks: one transaction per chunk keeps 100,000 lines fast (on
    /// PostgreSQL each transaction waits for its WAL flush), and at most a chunk is lost to a kill.
    let chunk: Int
    /// A chunk's lines stop at this many bytes too, so long lines never pile up in memory.
    static let chunkBytes = 16 << 20

    /// - Throws: a data error (65) when the job does not take submissions.
    init(queue: SubmissionQueue, spec: JobSpec, chunk: Int = 2000) throws(OffpeakError) {
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
        var pendingBytes = 0
        var refused = 0
        // The chunk committing meanwhile: its lines, and its outcomes to come.
        var committing:
            (lines: [Result<Submission, OffpeakError>], outcomes: Background<[Result<String, OffpeakError>]>)?
        /// Reports the committing chunk's lines, in order, once it is committed.
        func settle() throws(OffpeakError) {
            guard let chunk = committing else { return }
            committing = nil
            var outcomes = try chunk.outcomes.value().makeIterator()
            for line in chunk.lines {
                let outcome = line.flatMap { _ in outcomes.next() ?? .failure(OffpeakError(.software, "lost"))
                }
                if case .failure = outcome { refused += 1 }
                report(outcome)
            }
        }
        /// Starts committing the lines read so far, once the chunk before them is committed: chunks
        /// commit one at a time, in order.
        func flush() throws(OffpeakError) {
            try settle()
            guard !pending.isEmpty else { return }
            let accepted = pending.compactMap { try? $0.get() }
            let queue = self.queue
            committing = (
                pending, Background { () throws(OffpeakError) in try queue.submit(accepted, source: .submit) }
            )
            pending.removeAll(keepingCapacity: true)
            pendingBytes = 0
        }
        var number = 0
        var lines = LineReader(input)
        while true {
            let next: LineReader.Line?
            do {
                next = try lines.next()
            } catch {
                try flush()  // the lines read before the failure are committed and reported
                try settle()
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
                    pendingBytes += bytes.count
                }
            } catch {
                pending.append(.failure(error))
            }
            if pending.count >= chunk || pendingBytes >= Self.chunkBytes { try flush() }
        }
        try flush()
        try settle()
        return refused
    }
}
