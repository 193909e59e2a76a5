import Foundation

/// Writes a run's answers to `out/<job>/`: one file per item and an `index.json`.
///
/// Outputs are derived from results in the store, so they can always be written again, with no
/// network: after a crash, the next run rewrites whatever is missing. Each file is written to a
/// temporary name and renamed, so a reader never sees half a file, and the temporary files a
/// killed writer left are removed by the next write.
public struct OutputWriter: Sendable {
    public struct IndexEntry: Codable, Sendable, Equatable {
        public var id: String
        public var file: String?
        public var state: String
        public var error: String?
        public var model: String?
        public var fromCache: Bool?
    }

    public struct Index: Codable, Sendable, Equatable {
        public var job: String
        public var run: String
        public var items: [IndexEntry]
    }

    public let directory: URL

    public init(directory: URL) {
        self.directory = directory
    }

    /// Writes every answered item (skipping files whose content is already right) and the index;
    /// the steps of long items are left out of both.
    /// - Returns: how many item files were written anew.
    @discardableResult
    public func write(job: String, runID: String, requests: [RequestRecord], results: [String: ResultRecord])
        throws(OffpeakError) -> Int
    {
        // The steps of a long item (its chunks and reduce levels) are work, not outputs.
        let requests = requests.filter { !LongDocumentPlanner.stepSources.contains($0.source) }
        let names = OutputWriter.fileNames(for: requests.map(\.itemId))
        var written = 0
        var entries: [IndexEntry] = []
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            AtomicFile.removeLeftovers(in: directory)
            for request in requests {
                let name = names[request.itemId] ?? request.itemId
                guard let result = results[request.id] else {
                    entries.append(
                        IndexEntry(
                            id: request.itemId, file: nil, state: request.state.rawValue, error: request.error
                        ))
                    continue
                }
                let content = Data((result.text.hasSuffix("\n") ? result.text : result.text + "\n").utf8)
                let url = directory.appendingPathComponent(name)
                if (try? Data(contentsOf: url)) != content {
                    try AtomicFile.write(content, to: url)
                    written += 1
                }
                entries.append(
                    IndexEntry(
                        id: request.itemId, file: name, state: "done", error: nil, model: result.model,
                        fromCache: result.fromCache))
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let index = try encoder.encode(Index(job: job, run: runID, items: entries))
            try AtomicFile.write(index, to: directory.appendingPathComponent("index.json"))
        } catch {
            throw OffpeakError(.ioError, "cannot write outputs to \(directory.path)", cause: "\(error)")
        }
        return written
    }

    /// A file name per item id: the id's characters that are safe in a file name, its extension
    /// replaced by `.md`, made unique in item order (`-2`, `-3`, ...).
    static func fileNames(for ids: [String]) -> [String: String] {
        var names: [String: String] = [:]
        var taken: Set<String> = ["index.json"]
        for id in ids where names[id] == nil {
            var stem = id
            if let dot = stem.lastIndex(of: "."), dot > stem.startIndex, !stem[dot...].contains("/") {
                stem = String(stem[..<dot])
            }
            let safe = String(
                stem.unicodeScalars.map { scalar -> Character in
                    let ok =
                        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
                        || ("0"..."9").contains(scalar)
                        || scalar == "-" || scalar == "_" || scalar == "."
                    return ok ? Character(scalar) : "-"
                })
            let base = safe.isEmpty || safe.hasPrefix(".") ? "item" + safe : safe
            var name = base + ".md"
            var suffix = 2
            while taken.contains(name) {
                name = "\(base)-\(suffix).md"
                suffix += 1
            }
            taken.insert(name)
            names[id] = name
        }
        return names
    }
}
