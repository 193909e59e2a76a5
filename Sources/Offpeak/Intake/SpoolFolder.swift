import Foundation

/// `spool/<job>/`: a folder programs that only write files drop requests into.
///
/// A `.json` or `.jsonl` file holds submit lines; any other file is one request whose contents are
/// the `{{item}}` variable. Each regular file is taken into the store and then moved to
/// `spool/<job>/.taken/`; its requests carry the file's name as their id, so a file taken twice (a
/// crash between the two steps) is refused the second time, never answered twice.
///
/// Only what is in the workspace is read: the `spool` and `spool/<job>` folders are opened without
/// following a link, and each file by one descriptor opened the same way (see `FolderHandle`).
/// Hidden names are never taken: they are where writers keep files being written, and where
/// offpeak keeps its own (`.taken/`), so no file name can collide with them. Anything else
/// (a folder, a named pipe, a link, a file that cannot be read) stays where it is and is reported
/// once, in `offpeak queue` (`NotTakenRecord`), not retried as work.
struct SpoolFolder: Sendable {
    let workspace: Workspace
    let job: String

    /// Where taken files go, inside the job's folder (so a move is one `rename`).
    static let takenFolder = ".taken"
    /// Where versions before `.taken/` moved them: a folder of that name is left alone.
    static let earlierTakenFolder = "taken"

    init(workspace: Workspace, job: String) {
        self.workspace = workspace
        self.job = job
    }

    /// `spool/<job>`, as messages show it.
    var path: String { "spool/\(job)" }

    /// What one pass took: requests added, and lines or files refused with why (with the entries
    /// not taken that this pass noticed first).
    struct Taken: Sendable {
        var added: [String] = []
        var refused: [OffpeakError] = []
    }

    /// An entry not taken, and why.
    struct Refusal: Error {
        /// Its path as it is (`SpoolEntry.path`); an error's location writes its control characters
        /// out (`OffpeakError.description`).
        var entry: String
        var reason: String
    }

    /// Takes every regular file in the folder into `queue`, oldest name first, and records what it
    /// does not take.
    ///
    /// Under an exclusive `flock` on the folder: a `run` and a tick (or two runs) taking it at once
    /// take each file once; the second waits, then finds it moved.
    func take(into queue: SubmissionQueue, spec: JobSpec) throws(OffpeakError) -> Taken {
        var taken = Taken()
        var notTaken: [String: String] = [:]
        let opened = open()
        // The lock is held until what was not taken is noted too, so two passes note it once.
        defer { withExtendedLifetime(opened) {} }
        switch opened {
        case .success(let folder?):
            if let failure = folder.lock() {
                throw OffpeakError(.ioError, "cannot lock \(path)", cause: failure.reason)
            }
            try takeLocked(folder, into: queue, spec: spec, taken: &taken, notTaken: &notTaken)
        case .success(nil): break
        case .failure(let refusal): notTaken[refusal.entry] = refusal.reason
        }
        for record in try queue.store.schedules.noteNotTaken(job: job, found: notTaken, at: Date()) {
            taken.refused.append(
                OffpeakError(
                    .dataError, "\(record.reason) (`offpeak queue` lists it until it is gone)",
                    location: record.entry))
        }
        return taken
    }

    private func takeLocked(
        _ folder: FolderHandle, into queue: SubmissionQueue, spec: JobSpec, taken: inout Taken,
        notTaken: inout [String: String]
    ) throws(OffpeakError) {
        let names: [[UInt8]]
        switch folder.names() {
        case .success(let found): names = found.sorted { $0.lexicographicallyPrecedes($1) }
        case .failure(let failure): throw OffpeakError(.ioError, "cannot list \(path)", cause: failure.reason)
        }
        // Opened at the first file to take; a `.taken` that is not a folder of ours stops the taking
        // (reported once), not the look at the other entries.
        var destination: Result<FolderHandle, Refusal>?
        for name in names where name.first != UInt8(ascii: ".") {
            let entry = SpoolEntry(folder: path, name: name)
            let file: SpoolEntry.Contents
            switch entry.look(in: folder) {
            case .success(let contents?): file = contents
            case .success(nil): continue
            case .failure(let refusal):
                notTaken[refusal.entry] = refusal.reason
                continue
            }
            if destination == nil { destination = openTakenFolder(in: folder) }
            let takenFolder: FolderHandle
            switch destination {
            case .success(let opened): takenFolder = opened
            case .failure(let refusal):
                notTaken[refusal.entry] = refusal.reason
                continue
            case nil: continue
            }
            let (submissions, refused) = file.submissions(spec: spec)
            taken.refused += refused
            for outcome in try queue.submit(submissions, source: .spool) {
                switch outcome {
                case .success(let id): taken.added.append(id)
                case .failure(let error): taken.refused.append(error)
                }
            }
            // A file put in its place since it was read is left for the next pass.
            guard folder.identity(of: name) == file.identity else { continue }
            try move(name, from: folder, to: takenFolder, entry: entry)
        }
    }

    private func openTakenFolder(in folder: FolderHandle) -> Result<FolderHandle, Refusal> {
        let entry = "\(path)/\(Self.takenFolder)"
        switch folder.folder(Self.takenFolder, create: true) {
        case .success(let opened): return .success(opened)
        case .failure(.isA(let kind)):
            return .failure(
                Refusal(
                    entry: entry,
                    reason: "offpeak keeps taken files in this folder, but it is \(kind); "
                        + "nothing is taken from \(path) until it is removed"))
        case .failure(let failure):
            return .failure(
                Refusal(
                    entry: entry,
                    reason:
                        "offpeak keeps taken files in this folder, but cannot make it (\(failure.reason)); "
                        + "nothing is taken from \(path) until it can"))
        }
    }

    /// Moves a taken file into `.taken/`, over an earlier taken file of the same name; when that
    /// name is held by something else (a folder, say), beside it as `name.2`, `name.3`, ...
    private func move(
        _ name: [UInt8], from folder: FolderHandle, to destination: FolderHandle, entry: SpoolEntry
    )
        throws(OffpeakError)
    {
        var target = name
        var suffix = 1
        while case .success(let kind) = destination.kind(of: target), kind != .file, kind != .symbolicLink {
            suffix += 1
            target = name + Array(".\(suffix)".utf8)
        }
        if let failure = folder.move(name, to: destination, as: target), failure != .missing {
            throw OffpeakError(
                .ioError, "cannot move \(entry.display) to \(path)/\(Self.takenFolder)/",
                cause: failure.reason)
        }
    }

    /// The job's folder, opened inside the workspace without following a link: `nil` when there is
    /// none, a refusal when `spool` or `spool/<job>` is not a folder of the workspace.
    private func open() -> Result<FolderHandle?, Refusal> {
        guard !job.contains("/"), case .success(let root) = FolderHandle.open(workspace.root.path) else {
            return .success(nil)
        }
        let spool: FolderHandle
        switch root.folder("spool") {
        case .success(let opened): spool = opened
        case .failure(.missing): return .success(nil)
        case .failure(let failure): return .failure(Self.folderRefusal("spool", failure))
        }
        switch spool.folder(job) {
        case .success(let opened): return .success(opened)
        case .failure(.missing): return .success(nil)
        case .failure(let failure): return .failure(Self.folderRefusal(path, failure))
        }
    }

    private static func folderRefusal(_ entry: String, _ failure: FolderHandle.Failure) -> Refusal {
        switch failure {
        case .isA(.symbolicLink):
            Refusal(
                entry: entry,
                reason:
                    "a symbolic link; offpeak reads spool folders only inside the workspace, never through a link"
            )
        case .isA(let kind): Refusal(entry: entry, reason: "\(kind), not a folder")
        default: Refusal(entry: entry, reason: "cannot be opened (\(failure.reason))")
        }
    }
}
