import Foundation

/// One name in a spool folder: whether intake takes it, and the requests a taken file holds.
struct SpoolEntry {
    /// `spool/<job>`.
    let folder: String
    /// The name as the folder lists it: bytes, since a name need not be UTF-8.
    let name: [UInt8]

    /// `spool/<job>/<name>` for messages, control characters written out (`new\nline.txt`).
    var display: String {
        folder + "/" + ReadableText.escaped(bytes: name)
    }

    /// `spool/<job>/<name>` as it is, for the store and `--json` (whose encoder escapes it the
    /// ordinary way); a name that is not UTF-8 cannot be text, so it is kept as it is shown.
    var path: String {
        folder + "/" + (String(validating: name, as: UTF8.self) ?? ReadableText.escaped(bytes: name))
    }

    /// A regular file that was read, by one descriptor.
    struct Contents {
        let entry: SpoolEntry
        let name: String
        let data: Data
        let identity: FolderHandle.Identity
    }

    /// Reads the entry when intake takes it.
    /// - Returns: its contents; `nil` for what is passed over without a word (a name gone since the
    ///   listing, the `taken/` folder of earlier versions); a refusal for everything else.
    func look(in handle: FolderHandle) -> Result<Contents?, SpoolFolder.Refusal> {
        func refuse(_ reason: String) -> Result<Contents?, SpoolFolder.Refusal> {
            .failure(SpoolFolder.Refusal(entry: path, reason: reason))
        }
        guard let text = String(validating: name, as: UTF8.self) else {
            return refuse("its name is not valid UTF-8; the name is the request's id, which is text")
        }
        switch handle.kind(of: name) {
        case .failure(.missing): return .success(nil)
        case .failure(let failure): return refuse("cannot be read (\(failure.reason))")
        case .success(.folder) where text == SpoolFolder.earlierTakenFolder: return .success(nil)
        case .success(let kind) where kind != .file: return refuse(Self.notRegular(kind))
        case .success: break
        }
        if let problem = Submission.problem(withID: text) {
            return refuse("its name, the request's id, has a \(problem)")
        }
        switch handle.readFile(name) {
        case .success(let (data, identity)):
            return .success(Contents(entry: self, name: text, data: data, identity: identity))
        case .failure(.missing): return .success(nil)
        case .failure(.isA(let kind)): return refuse(Self.notRegular(kind))
        case .failure(let failure): return refuse("cannot be read (\(failure.reason))")
        }
    }

    static func notRegular(_ kind: FolderHandle.Kind) -> String {
        kind == .symbolicLink
            ? "a symbolic link; offpeak takes only regular files and never follows a link"
            : "\(kind); offpeak takes only regular files"
    }
}

extension SpoolEntry.Contents {
    /// The file's requests: a `.json`/`.jsonl` file's submit lines (each refused line named with
    /// its number), else one request whose `{{item}}` is the whole text.
    func submissions(spec: JobSpec) -> (submissions: [Submission], refused: [OffpeakError]) {
        let location = entry.display
        guard name.hasSuffix(".json") || name.hasSuffix(".jsonl") else {
            guard data.count <= ValueLimits.lineBytes else {
                return ([], [Submission.tooLong(bytes: data.count, location: location, what: "file")])
            }
            do {
                let text = try UTF8Text.decode(data, file: location, status: .dataError)
                return (
                    [Submission(clientId: name, variables: ["item": text, "id": name], location: location)],
                    []
                )
            } catch {
                return ([], [error])
            }
        }
        var submissions: [Submission] = []
        var refused: [OffpeakError] = []
        for (index, line) in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .enumerated()
        {
            let lineLocation = "\(location):\(index + 1)"
            guard line.count <= ValueLimits.lineBytes else {
                refused.append(Submission.tooLong(bytes: line.count, location: lineLocation))
                continue
            }
            do {
                guard var submission = try Submission.parse(line: line, location: lineLocation, spec: spec)
                else { continue }
                submission.clientId = submission.clientId ?? "\(name):\(index + 1)"
                submissions.append(submission)
            } catch {
                refused.append(error)
            }
        }
        return (submissions, refused)
    }
}
