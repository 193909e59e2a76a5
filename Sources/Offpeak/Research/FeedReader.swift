import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// The `XMLParser` delegate behind `Feed.parse`: finds the feed's format at its root element, and
/// collects each entry's fields as readable text (`RawFeedEntry`), leaving their meaning to `Feed`.
///
/// Only an entry's own children are its fields (an Atom entry's `<source><id>` is not its id),
/// matched by local name and namespace with the parser's namespace processing on, so an RSS item's
/// `<atom:link>` or `<media:title>` is not taken for its `<link>` or `<title>`. Markup inside a
/// field (Atom's xhtml content, or HTML an RSS feed forgot to escape) is written back as tags for
/// `HTMLText`. The first error the parser reports is kept with its line and column: by the time
/// `parse()` returns, the parser has moved on, and a document cut short returns `true` anyway.
final class FeedReader: NSObject, XMLParserDelegate {
    enum Format { case rss, atom, rdf }

    static let rdfNamespace = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
    static let rss1Namespace = "http://purl.org/rss/1.0/"
    static let contentNamespace = "http://purl.org/rss/1.0/modules/content/"
    static let dublinCoreNamespace = "http://purl.org/dc/elements/1.1/"

    /// A field's text: markup for `HTMLText` (`html`, as RSS and Atom's `type="html"` write it
    /// escaped or in CDATA; `xhtml`, as elements, whose text is escaped again as it is collected),
    /// or text as written (`text`).
    enum TextType { case html, xhtml, text }

    private struct Capture {
        var field: WritableKeyPath<RawFeedEntry, String?>
        var type: TextType
        /// The field element's depth: the capture ends with it.
        var depth: Int
        var text = ""
    }

    let maxEntries: Int
    private(set) var format: Format?
    private(set) var entries: [RawFeedEntry] = []
    /// The first problem met, where the parser was.
    private(set) var failure: (code: FeedError.Code, line: Int, column: Int, problem: String)?

    private var depth = 0
    /// The namespace of the root element: Atom fields are matched in it.
    private var rootNamespace = ""
    private var entry: RawFeedEntry?
    private var entryDepth = 0
    private var capture: Capture?
    private var entryCount = 0

    init(maxEntries: Int) {
        self.maxEntries = maxEntries
    }

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
        qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
    ) {
        depth += 1
        let namespace = namespaceURI ?? ""
        if depth == 1 {
            return root(parser, name: elementName, qualified: qName, namespace: namespace)
        }
        if var capture {
            if capture.type != .text { capture.text += "<\(elementName)>" }
            self.capture = capture
            return
        }
        if entry == nil {
            if isEntry(elementName, namespace: namespace) { startEntry(parser, attributes: attributeDict) }
            return
        }
        if depth == entryDepth + 1 {
            startField(elementName, namespace: namespace, attributes: attributeDict)
        }
    }

    func parser(
        _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?,
        qualifiedName qName: String?
    ) {
        defer { depth -= 1 }
        if var capture {
            if depth == capture.depth {
                let text =
                    capture.type == .text
                    ? HTMLText.collapse(capture.text) : HTMLText.text(fromHTML: capture.text)
                if var current = entry, current[keyPath: capture.field] == nil {
                    current[keyPath: capture.field] = text
                    entry = current
                }
                self.capture = nil
            } else {
                if capture.type != .text { capture.text += "</\(elementName)>" }
                self.capture = capture
            }
        } else if depth == entryDepth, let finished = entry {
            entries.append(finished)
            entry = nil
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        guard var capture else { return }
        capture.text += capture.type == .xhtml ? Self.escaped(string) : string
        self.capture = capture
    }

    func parser(_ parser: XMLParser, foundCDATA block: Data) {
        guard var capture else { return }
        let string = String(decoding: block, as: UTF8.self)
        capture.text += capture.type == .xhtml ? Self.escaped(string) : string
        self.capture = capture
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        guard failure == nil else { return }
        let code = (parseError as NSError).code
        fail(.malformed, parser, FeedError.problem(forXMLError: code))
    }

    private func fail(_ code: FeedError.Code, _ parser: XMLParser, _ problem: String) {
        guard failure == nil else { return }
        failure = (code, max(parser.lineNumber, 1), max(parser.columnNumber, 1), problem)
    }

    private func root(_ parser: XMLParser, name: String, qualified: String?, namespace: String) {
        rootNamespace = namespace
        switch (name, namespace) {
        case ("rss", ""): format = .rss
        case ("feed", _): format = .atom
        case ("RDF", Self.rdfNamespace): format = .rdf
        default:
            let got = namespace.isEmpty ? "<\(qualified ?? name)>" : "<\(name)> in namespace \(namespace)"
            fail(
                .notAFeed, parser,
                "expected <rss>, Atom's <feed> or RSS 1.0's <rdf:RDF> at the root, got \(got)")
            parser.abortParsing()
        }
    }

    private func isEntry(_ name: String, namespace: String) -> Bool {
        switch format {
        case .rss?: return name == "item" && namespace.isEmpty
        case .rdf?: return name == "item" && (namespace == Self.rss1Namespace || namespace.isEmpty)
        case .atom?: return name == "entry" && namespace == rootNamespace
        case nil: return false
        }
    }

    private func startEntry(_ parser: XMLParser, attributes: [String: String]) {
        entryCount += 1
        guard entryCount <= maxEntries else {
            fail(
                .tooManyEntries, parser,
                "more than \(maxEntries) entries (offpeak reads at most \(maxEntries))")
            parser.abortParsing()
            return
        }
        var started = RawFeedEntry(position: entryCount - 1)
        if format == .rdf { started.id = attributes["rdf:about"] ?? attributes["about"] }
        entry = started
        entryDepth = depth
    }

    /// Starts collecting a field the entry's format knows; any other child is skipped.
    private func startField(_ name: String, namespace: String, attributes: [String: String]) {
        let field: WritableKeyPath<RawFeedEntry, String?>
        var type = TextType.text
        switch (format, namespace, name) {
        case (.atom?, rootNamespace, "id"): field = \.id
        case (.atom?, rootNamespace, "link"):
            let rel = attributes["rel"]?.trimmingCharacters(in: .whitespaces) ?? "alternate"
            if rel == "alternate" || rel.isEmpty, entry?.link == nil { entry?.link = attributes["href"] }
            return
        case (.atom?, rootNamespace, "title"): field = \.title
        case (.atom?, rootNamespace, "summary"): field = \.summary
        case (.atom?, rootNamespace, "content"):
            // `src` points at content elsewhere; the element itself is then empty.
            guard attributes["src"] == nil else { return }
            field = \.content
        case (.atom?, rootNamespace, "published"): field = \.published
        case (.atom?, rootNamespace, "updated"): field = \.updated
        case (.atom?, _, _): return
        case (_, Self.contentNamespace, "encoded"): (field, type) = (\.content, .html)
        case (_, Self.dublinCoreNamespace, "date"): field = \.updated
        case (_, let namespace, _) where !namespace.isEmpty && namespace != Self.rss1Namespace: return
        case (_, _, "guid"):
            field = \.id
            entry?.guidIsLink = attributes["isPermaLink"]?.lowercased() != "false"
        case (_, _, "link"): field = \.link
        case (_, _, "title"): (field, type) = (\.title, .html)
        case (_, _, "description"): (field, type) = (\.summary, .html)
        case (_, _, "pubDate"): field = \.published
        default: return
        }
        if format == .atom {
            switch attributes["type"]?.lowercased() {
            case "html"?, "text/html"?: type = .html
            case "xhtml"?, "application/xhtml+xml"?: type = .xhtml
            default: type = .text
            }
        }
        capture = Capture(field: field, type: type, depth: depth)
    }

    /// Text to be read again as HTML: its `&`, `<` and `>` must stay text.
    private static func escaped(_ text: String) -> String {
        guard text.contains(where: { $0 == "&" || $0 == "<" || $0 == ">" }) else { return text }
        return text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}

/// One entry's fields as the feed gave them, each already readable text (markup reduced by
/// `HTMLText`, whitespace collapsed), before `Feed` chooses its id, link, summary and date.
struct RawFeedEntry {
    /// 0-based place in the feed.
    var position: Int
    var id: String?
    /// RSS: whether the `guid` is the entry's permalink (`isPermaLink`, true unless "false").
    var guidIsLink = false
    var link: String?
    var title: String?
    var summary: String?
    var content: String?
    var published: String?
    var updated: String?
}
