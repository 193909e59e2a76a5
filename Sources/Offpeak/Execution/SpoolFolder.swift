import Foundation

/// `spool/<job>/`: a folder programs that only write files drop requests into.
///
/// A `.json` or `.jsonl` file holds submit lines; any other file is one request whose contents are
/// the `{{item}}` variable. Each file is taken into the store and then moved to `spool/<job>/taken/`;
/// its requests carry the file's name as their id, so a file taken twice (a crash between the two
/// steps) is refused the second time, never answered twice.
public struct SpoolFolder: Sendable {
    public let directory: URL

    public init(workspace: Workspace, job: String) {
        directory = workspace.root.appendingPathComponent("spool/\(job)", isDirectory: true)
    }

    /// True when the folder holds a file to take.
    public var hasFiles: Bool {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.contains { !$0.hasPrefix(".") && $0 != "taken" }
    }

    /// What one pass took: requests added, and lines or files refused with why.
    public struct Taken: Sendable {
        public var added: [String] = []
        public var refused: [OffpeakError] = []
    }

    /// Takes every file in the folder into `queue`, oldest name first.
    ///
    /// Under an exclusive `flock` on `spool/<job>/.lock`: a `run` and a tick (or two runs) taking
    /// the folder at once take each file once; the second waits, then finds it moved.
    public func take(into queue: SubmissionQueue, spec: JobSpec) throws(OffpeakError) -> Taken {
        let manager = FileManager.default
        guard manager.fileExists(atPath: directory.path) else { return Taken() }
        let lock = try FileLock.exclusive(at: directory.appendingPathComponent(".lock").path)
        defer { withExtendedLifetime(lock) {} }
        return try takeLocked(into: queue, spec: spec)
    }

    private func takeLocked(into queue: SubmissionQueue, spec: JobSpec) throws(OffpeakError) -> Taken {
        var taken = Taken()
        let manager = FileManager.default
        guard let names = try? manager.contentsOfDirectory(atPath: directory.path) else { return taken }
        let takenDirectory = directory.appendingPathComponent("taken", isDirectory: true)
        for name in names.sorted() where !name.hasPrefix(".") && name != "taken" {
            let url = directory.appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue,
                let data = manager.contents(atPath: url.path)
            else { continue }
            let location = "spool/\(spec.name)/\(name)"
            var submissions: [Submission] = []
            if name.hasSuffix(".json") || name.hasSuffix(".jsonl") {
                let lines = String(decoding: data, as: UTF8.self).split(
                    separator: "\n", omittingEmptySubsequences: false)
                for (index, line) in lines.enumerated()
                where !line.trimmingCharacters(in: .whitespaces).isEmpty {
                    do {
                        var submission = try Submission.parse(
                            String(line), location: "\(location):\(index + 1)", spec: spec)
                        submission.clientId = submission.clientId ?? "\(name):\(index + 1)"
                        submissions.append(submission)
                    } catch {
                        taken.refused.append(error)
                    }
                }
            } else if let text = String(validating: data, as: UTF8.self) {
                submissions.append(Submission(clientId: name, variables: ["item": text, "id": name]))
            } else {
                taken.refused.append(OffpeakError(.dataError, "not UTF-8 text", location: location))
            }
            for outcome in try queue.submit(submissions, source: "spool") {
                switch outcome {
                case .success(let id): taken.added.append(id)
                case .failure(let error):
                    taken.refused.append(OffpeakError(.dataError, error.message, location: location))
                }
            }
            do {
                try manager.createDirectory(at: takenDirectory, withIntermediateDirectories: true)
                let target = takenDirectory.appendingPathComponent(name)
                try? manager.removeItem(at: target)
                try manager.moveItem(at: url, to: target)
            } catch {
                throw OffpeakError(
                    .ioError, "cannot move \(location) to taken/", cause: error.localizedDescription)
            }
        }
        return taken
    }
}
