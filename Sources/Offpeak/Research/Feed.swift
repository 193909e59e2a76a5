import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// One entry of a feed, as a research job's item will see it: `{{item}}` is its title and summary,
/// `{{sources}}` its linked page.
struct FeedEntry: Sendable, Equatable {
    /// Stable across runs, so an entry already answered is not asked again: the RSS `guid`, Atom
    /// `id` or RSS 1.0 `rdf:about`; else the link; else `sha256:` and the hash of the title and
    /// summary.
    var id: String
    /// Readable text: HTML reduced by `HTMLText`, entities decoded, on one line.
    var title: String
    /// Readable text: RSS's `description` (else `content:encoded`), Atom's `summary` (else
    /// `content`); empty when the entry has neither.
    var summary: String
    /// The entry's page as an absolute http or https URL (a relative link is resolved against the
    /// feed's URL); `nil` when it has none, or none that could be fetched.
    var link: String?
    /// RSS `pubDate` (else `dc:date`), Atom `published` (else `updated`); `nil` when missing or
    /// unreadable.
    var published: Date?
}

/// Reads RSS 2.0 (and 0.9x), Atom 1.0 and RSS 1.0 (RDF) feeds with Foundation's `XMLParser`.
///
/// External entities are never resolved, so a feed cannot make offpeak read a local file or
/// another URL (XXE). A document that uses one loses that entity's text (and, with
/// swift-corelibs-foundation, the text after it), and one that uses an external parameter entity
/// is refused as malformed: only a hostile or broken feed declares either.
enum Feed {
    /// Most entries one feed may have (`ValueLimits.feedEntries`).
    static let maxEntries = ValueLimits.feedEntries

    /// The feed's entries in the order it lists them (usually newest first); of entries sharing an
    /// id, the first is kept.
    /// - Parameters:
    ///   - data: the feed document as fetched; its encoding is read from its XML declaration.
    ///   - url: the feed's URL, to resolve relative links and to name the feed in errors (pass it
    ///     redacted if it may carry a key).
    /// - Throws: `FeedError` when the document is not well-formed XML, is not RSS or Atom, or has
    ///   more than `maxEntries` entries.
    static func parse(_ data: Data, url: String) throws(FeedError) -> [FeedEntry] {
        let parser = XMLParser(data: data)
        parser.shouldProcessNamespaces = true
        parser.shouldReportNamespacePrefixes = false
        parser.shouldResolveExternalEntities = false
        parser.externalEntityResolvingPolicy = .never
        let reader = FeedReader(maxEntries: maxEntries)
        parser.delegate = reader
        let finished = parser.parse()
        if let failure = reader.failure {
            throw FeedError(
                code: failure.code, url: url, line: failure.line, column: failure.column,
                problem: failure.problem)
        }
        if !finished || parser.parserError != nil {
            let code = (parser.parserError as NSError?)?.code ?? 0
            throw FeedError(
                code: .malformed, url: url, line: max(parser.lineNumber, 1),
                column: max(parser.columnNumber, 1),
                problem: FeedError.problem(forXMLError: code))
        }
        guard reader.format != nil else {
            throw FeedError(
                code: .notAFeed, url: url, line: 1, column: 1,
                problem: "expected <rss>, Atom's <feed> or RSS 1.0's <rdf:RDF>, got an empty document")
        }
        let base = URL(string: url)
        var seen: Set<String> = []
        var entries: [FeedEntry] = []
        for raw in reader.entries {
            let entry = entry(raw, base: base)
            if seen.insert(entry.id).inserted { entries.append(entry) }
        }
        return entries
    }

    /// `entries` (as `parse` returns them) oldest first, the order `max_new` takes new entries in.
    ///
    /// Dated entries go by date. An undated one is taken to be just newer than the nearest dated
    /// entry after it in the feed (feeds list newest first), or older than every dated entry when
    /// none follows; entries alike in that go from the feed's end to its start. So a feed without
    /// dates is read from its end, and one missing a date here and there keeps its order.
    static func oldestFirst(_ entries: [FeedEntry]) -> [FeedEntry] {
        var sortDates: [Date] = []
        var older = Date.distantPast
        for entry in entries.reversed() {
            older = entry.published ?? older
            sortDates.append(older)
        }
        sortDates.reverse()
        let order = entries.indices.sorted { first, second in
            sortDates[first] != sortDates[second] ? sortDates[first] < sortDates[second] : first > second
        }
        return order.map { entries[$0] }
    }

    /// An entry's meaning from its fields: which link, summary, date and id it has.
    private static func entry(_ raw: RawFeedEntry, base: URL?) -> FeedEntry {
        let guid = raw.id.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        let link = raw.link.flatMap { page($0, base: base) } ?? (raw.guidIsLink ? page(guid, base: nil) : nil)
        let title = (raw.title ?? "").split(separator: "\n").joined(separator: " ")
        let summary = [raw.summary, raw.content].compactMap { $0 }.first { !$0.isEmpty } ?? ""
        let published = [raw.published, raw.updated].compactMap { $0 }.lazy
            .compactMap { FeedDate.rfc822($0) ?? FeedDate.rfc3339($0) }.first
        let id = !guid.isEmpty ? guid : link ?? "sha256:" + SHA256.hex(title + "\n" + summary)
        return FeedEntry(id: id, title: title, summary: summary, link: link, published: published)
    }

    /// `text` as an absolute http or https URL with a host, resolved against the feed's URL (a
    /// `guid` is not resolved: `1234` is an id, not a path).
    private static func page(_ text: String, base: URL?) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, let url = URL(string: trimmed, relativeTo: base)?.absoluteURL,
            let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host?.isEmpty == false
        else { return nil }
        return url.absoluteString
    }
}
