import Foundation

/// Writes a run's answers to `out/<job>/`: one file per item and an `index.json`. A feed job's
/// folder also holds the entries its earlier runs answered (each asked once): the index lists
/// them too, first, each with the run that answered it, so it describes the whole folder.
///
/// Outputs are derived from results in the store, so they can always be written again, with no
/// network: after a crash, the next run rewrites whatever is missing. Each file is written to a
/// temporary name and renamed, so a reader never sees half a file, and the temporary files a
/// killed writer left are removed by the next write.
struct OutputWriter: Sendable {
    struct IndexEntry: Codable, Sendable, Equatable {
        var id: String
        var file: String?
        var state: String
        var error: String?
        var model: String?
        var fromCache: Bool?
        /// The run that answered it (or that holds it, unanswered): this one but for a feed
        /// job's entries answered earlier.
        var run: String?
        /// Against the job's previous run (`ItemChange`); nil for submitted requests.
        var change: ItemChange?
        /// The research sources behind the answer (`SourceCitation`); nil for none.
        var sources: [SourceCitation]?
        /// The web search results the answer cited (`SearchCitation`); nil for none.
        var searchResults: [SearchCitation]?
        /// The answer stopped at `max_tokens` (`finish_reason: length`) and is kept as it came; nil
        /// for a whole answer.
        var cutOff: Bool?
    }

    struct Index: Codable, Sendable, Equatable {
        var job: String
        var run: String
        var items: [IndexEntry]
        /// `digest.md` when the run has a digest (`RunSession.advanceDigest`).
        var digest: String?
    }

    /// The file a run's digest is written to.
    static let digestFile = "digest.md"

    let directory: URL

    init(directory: URL) {
        self.directory = directory
    }

    /// What a write found and did.
    struct Written: Sendable, Equatable {
        /// Answered items, one file each.
        var files = 0
        /// Of those, the files that were missing or different and were written anew.
        var rewritten = 0
        /// Answers cut off at `max_tokens`, and the output tokens of the first of them.
        var cutOff = 0
        var firstCutOffTokens: Int?
    }

    /// Writes every answered item (skipping files whose content is already right) and the index;
    /// the steps of long items are left out of both.
    @discardableResult
    func write(
        job: String, runID: String, requests: [RequestRecord], results: [String: ResultRecord],
        notes: [String: ItemNotes] = [:]
    ) throws(OffpeakError) -> Written {
        try write(job: job, runID: runID, items: requests.map(RequestOutline.init), notes: notes) {
            (visit: (ResultRecord) throws(OffpeakError) -> Void) throws(OffpeakError) in
            for result in results.values { try visit(result) }
        }
    }

    /// The same, from the run's requests outlined and its answers handed over one at a time
    /// (`Store.forEachResult`): a run of any size is written holding one answer at a time.
    /// - Parameters:
    ///   - notes: each item's change since the job's previous run and its sources, by item id.
    ///   - earlier: the items earlier runs answered that are not the run's (`earlierAnswers`), each
    ///     once; their files are named first, so every entry keeps its name from run to run.
    ///   - answers: calls its argument with each answer of the run, in any order.
    @discardableResult
    func write(
        job: String, runID: String, items: [RequestOutline], notes: [String: ItemNotes] = [:],
        earlier: [EarlierAnswer] = [],
        answers: ((ResultRecord) throws(OffpeakError) -> Void) throws(OffpeakError) -> Void
    ) throws(OffpeakError) -> Written {
        // The run's digest is written to a file of its own.
        let digestID = items.first { $0.source == .reduce && $0.itemId == RunSession.digestItemID }?.id
        var digest: String?
        // The steps of a long item (its chunks and reduce levels) are work, not outputs.
        let items = items.filter { !$0.source.isStep }
        let names = OutputWriter.fileNames(for: earlier.map(\.itemId) + items.map(\.itemId))
        let (earlierNames, itemNames) = (names.prefix(earlier.count), Array(names.dropFirst(earlier.count)))
        let slots = Dictionary(
            items.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { first, _ in first })
        var entries = items.map {
            IndexEntry(
                id: $0.itemId, file: nil, state: $0.state.rawValue, error: $0.error, run: runID,
                change: notes[$0.itemId]?.change, sources: Self.cited(notes[$0.itemId]))
        }
        var written = Written()
        try attempt {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        AtomicFile.removeLeftovers(in: directory)
        var earlierEntries: [IndexEntry] = []
        for (answer, name) in zip(earlier, earlierNames) {
            written.files += 1
            if try write(Self.content(answer.text), to: directory.appendingPathComponent(name)) {
                written.rewritten += 1
            }
            // A feed's entry is asked once: it was new to the run that answered it.
            earlierEntries.append(
                IndexEntry(
                    id: answer.itemId, file: name, state: "done", error: nil, model: answer.model,
                    fromCache: answer.fromCache, run: answer.runId, change: .new,
                    sources: Self.cited(SourceCitation.decoded(answer.sources)),
                    searchResults: Self.cited(SearchCitation.decoded(answer.citations)),
                    cutOff: answer.finishReason == FinishReason.length.rawValue ? true : nil))
        }
        try answers { result throws(OffpeakError) in
            let content = Self.content(result.text)
            if result.requestId == digestID {
                digest = Self.digestFile
                try write(content, to: directory.appendingPathComponent(Self.digestFile))
            }
            guard let slot = slots[result.requestId] else { return }  // a step's answer
            written.files += 1
            if try write(content, to: directory.appendingPathComponent(itemNames[slot])) {
                written.rewritten += 1
            }
            let cutOff = result.finishReason == FinishReason.length.rawValue
            if cutOff {
                written.cutOff += 1
                written.firstCutOffTokens = written.firstCutOffTokens ?? result.outputTokens
            }
            entries[slot] = IndexEntry(
                id: items[slot].itemId, file: itemNames[slot], state: "done", error: nil, model: result.model,
                fromCache: result.fromCache, run: runID, change: notes[items[slot].itemId]?.change,
                sources: Self.cited(notes[items[slot].itemId]),
                searchResults: Self.cited(SearchCitation.decoded(result.citations)),
                cutOff: cutOff ? true : nil)
        }
        entries = earlierEntries + entries
        try attempt {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            encoder.dateEncodingStrategy = .iso8601
            let index = try encoder.encode(Index(job: job, run: runID, items: entries, digest: digest))
            try AtomicFile.write(index, to: directory.appendingPathComponent("index.json"))
        }
        return written
    }

    /// An item's sources as its entry lists them; nil (left out) for none.
    private static func cited(_ notes: ItemNotes?) -> [SourceCitation]? {
        notes.flatMap { cited($0.citations) }
    }

    /// Sources or search results as an entry lists them; nil (left out) for none.
    private static func cited<Citation>(_ citations: [Citation]) -> [Citation]? {
        citations.isEmpty ? nil : citations
    }

    /// An answer's file: its text, ending in a newline.
    private static func content(_ text: String) -> Data {
        Data((text.hasSuffix("\n") ? text : text + "\n").utf8)
    }

    /// Writes `content` to `url` unless the file already holds it.
    /// - Returns: whether it wrote.
    @discardableResult
    private func write(_ content: Data, to url: URL) throws(OffpeakError) -> Bool {
        guard (try? Data(contentsOf: url)) != content else { return false }
        try attempt { try AtomicFile.write(content, to: url) }
        return true
    }

    /// Runs `body`, its failure said as outputs that cannot be written.
    private func attempt(_ body: () throws -> Void) throws(OffpeakError) {
        do { try body() } catch {
            throw OffpeakError(.ioError, "cannot write outputs to \(directory.path)", cause: "\(error)")
        }
    }

    /// The longest file name given to an item, in bytes: every name that fit before names were
    /// bounded (a file system allows 255) keeps it, and the temporary file beside it still fits.
    static let maxNameBytes = 240

    /// A file name per item id: the id's characters that are safe in a file name, its extension
    /// replaced by `.md`, made unique in item order (`-2`, `-3`, ...). An id too long for that is
    /// named by a readable prefix and a hash of the whole id (`<prefix>-<16 hex>.md`), so any id
    /// gets a name of at most `maxNameBytes`, never hidden, `..`, `index.json` or `digest.md`; `index.json`
    /// says which id each file holds.
    ///
    /// Ids are told apart by their bytes, as the store does: `é` written as one code point and as
    /// `e` and an accent are two items, and get two files.
    /// - Returns: the name of each id, in order (the same name for the same id).
    static func fileNames(for ids: [String]) -> [String] {
        var byID: [[UInt8]: String] = [:]
        var taken: Set<String> = ["index.json", digestFile]
        return ids.map { id in
            let key = Array(id.utf8)
            if let name = byID[key] { return name }
            let base = readableStem(id)
            var suffix = 1
            var name = candidate(base, id: id, suffix: suffix)
            while taken.contains(name) {
                suffix += 1
                name = candidate(base, id: id, suffix: suffix)
            }
            taken.insert(name)
            byID[key] = name
            return name
        }
    }

    /// `base.md` (`base-N.md` for the Nth of a name), or, when that is too long,
    /// `<prefix>-<hash>.md` (`<prefix>-<hash>-N.md`).
    private static func candidate(_ base: String, id: String, suffix: Int) -> String {
        let tail = (suffix > 1 ? "-\(suffix)" : "") + ".md"
        if base.utf8.count + tail.utf8.count <= maxNameBytes { return base + tail }
        let hash = "-" + SHA256.hex(Array(id.utf8)).prefix(16)
        // The stem is ASCII, so a prefix of characters is one of bytes.
        return String(base.prefix(maxNameBytes - hash.utf8.count - tail.utf8.count)) + hash + tail
    }

    /// The id without its extension, every character but `A-Z a-z 0-9 - _ .` turned into `-`, and
    /// `item` in front of an empty or hidden one.
    private static func readableStem(_ id: String) -> String {
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
        return safe.isEmpty || safe.hasPrefix(".") ? "item" + safe : safe
    }
}

extension OutputWriter {
    /// What a feed job's folder holds from its runs before `run` (`earlier` of `write`): each item
    /// they answered that `run` does not hold, with its latest answer, in the order they were first
    /// answered. None for a job without feeds, whose runs all ask the same items.
    /// - Parameter items: the run's requests, outlined.
    static func earlier(_ run: RunRecord, items: [RequestOutline], store: Store) throws(OffpeakError)
        -> [EarlierAnswer]
    {
        guard run.storedSpec()?.feeds.isEmpty == false else { return [] }
        let own = Set(items.map(\.itemId))
        var order: [String] = []
        var latest: [String: EarlierAnswer] = [:]
        for answer in try store.runs.earlierAnswers(job: run.job, before: run.createdAt)
        where !own.contains(answer.itemId) {
            if latest.updateValue(answer, forKey: answer.itemId) == nil { order.append(answer.itemId) }
        }
        return order.compactMap { latest[$0] }
    }
}
