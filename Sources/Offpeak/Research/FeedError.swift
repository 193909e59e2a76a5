import Foundation

/// Why a feed could not be read: one line naming the feed, the line and column the XML parser
/// stopped at, and what it expected there.
///
/// `feed https://example.org/rss is not RSS or Atom: line 3, column 24: malformed XML: a closing
/// tag does not match the element it closes`.
struct FeedError: Error, Equatable, Sendable, CustomStringConvertible {
    enum Code: Sendable, Equatable {
        /// Not well-formed XML (the parser's own error).
        case malformed
        /// Well-formed XML, but its root is not `<rss>`, Atom's `<feed>` or RSS 1.0's `<rdf:RDF>`.
        case notAFeed
        /// More entries than `Feed.maxEntries`.
        case tooManyEntries
    }

    var code: Code
    /// The feed's URL, as the caller gave it (redacted, if it could carry a key).
    var url: String
    /// 1-based position the parser reports.
    var line: Int
    var column: Int
    /// What was wrong there, phrased as what was expected.
    var problem: String

    var description: String {
        let place = "line \(line), column \(column)"
        switch code {
        case .malformed: return "feed \(url) is not RSS or Atom: \(place): malformed XML: \(problem)"
        case .notAFeed: return "feed \(url) is not RSS or Atom: \(place): \(problem)"
        case .tooManyEntries: return "feed \(url) is too long: \(place): \(problem)"
        }
    }

    /// What a libxml2 error code means, for the errors feeds in the wild commit; the rest are
    /// named by number. `XMLParser` reports libxml2's own `xmlParserErrors` number with no message,
    /// and swift-corelibs-foundation numbers its `XMLParser.ErrorCode` cases differently from
    /// libxml2 and Darwin (its `tagNameMismatchError` is 74, libxml2's 76), so the numbers are
    /// matched here, as libxml2's `xmlerror.h` gives them.
    static func problem(forXMLError code: Int) -> String {
        switch code {
        case 3, 4: return "expected '<' to start an XML document"
        case 5: return "the document ends before its elements are closed, or goes on after its root"
        case 9: return "a character XML does not allow"
        case 22, 68: return "expected a name (a bare '&' must be written '&amp;', a bare '<' '&lt;')"
        case 23: return "expected ';' after an entity name (a bare '&' must be written '&amp;')"
        case 26, 27: return "an undeclared entity (XML has only &amp; &lt; &gt; &quot; &apos; and &#NNN;)"
        case 31, 32, 79, 81: return "text not in the encoding it declares"
        case 38: return "'<' inside an attribute value"
        case 39, 40: return "expected a quoted attribute value"
        case 41: return "expected '=' and a value after an attribute name"
        case 42: return "an attribute given twice in one tag"
        case 45: return "a comment that is not closed"
        case 63: return "a CDATA section that is not closed"
        case 64: return "the XML declaration is not at the very start"
        case 65: return "expected a space"
        case 72: return "expected '<'"
        case 73: return "expected '>'"
        case 74: return "expected '</'"
        case 76: return "a closing tag does not match the element it closes"
        case 77: return "a tag that is not finished"
        case 85: return "elements that are not closed in order"
        case 86: return "content after the root element ends"
        case 89: return "an entity that refers to itself or expands too far"
        default: return "XML error \(code)"
        }
    }
}
