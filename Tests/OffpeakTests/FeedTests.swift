import Foundation
import Testing

@testable import Offpeak

/// `Feed.parse` on feeds shaped like real ones: RSS 2.0, RSS 0.92 without guids, Atom 1.0, RSS 1.0.
struct FeedTests {
    static let url = "https://example.org/feed.xml"

    func parse(_ xml: String, url: String = Self.url) throws(FeedError) -> [FeedEntry] {
        try Feed.parse(Data(xml.utf8), url: url)
    }

    /// The error parsing `xml` must throw.
    func failure(_ xml: String, sourceLocation: SourceLocation = #_sourceLocation) -> FeedError? {
        do {
            let entries = try parse(xml)
            Issue.record("expected an error, got \(entries.count) entries", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }

    /// An instant written in RFC 3339, for expectations.
    func date(_ text: String) -> Date? { FeedDate.rfc3339(text) }

    /// A blog's RSS 2.0 feed: HTML escaped and in CDATA, a `guid` that is and one that is not a
    /// permalink, an `atom:link` and `media:title` that are not the item's, a repeated guid.
    static let rss = """
        <?xml version="1.0" encoding="UTF-8"?>
        <rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"
            xmlns:atom="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/">
        <channel>
          <title>Swift.org Blog</title>
          <link>https://www.swift.org/blog/</link>
          <atom:link href="https://www.swift.org/atom.xml" rel="self" type="application/rss+xml"/>
          <item>
            <title>Swift 6.1 &amp;amp; the new &lt;b&gt;tools&lt;/b&gt;</title>
            <link>https://www.swift.org/blog/swift-6.1-released/</link>
            <guid isPermaLink="false">  swift-6.1-released
            </guid>
            <pubDate>Mon, 31 Mar 2025 10:00:00 -0700</pubDate>
            <description><![CDATA[<p>Swift 6.1 is now available &mdash; with <a href="https://x">faster
              builds</a>.</p><p>Second&nbsp;paragraph.</p>]]></description>
            <content:encoded><![CDATA[<p>Full text</p>]]></content:encoded>
            <media:title>Not the title</media:title>
          </item>
          <item>
            <title><![CDATA[Café & crème]]></title>
            <atom:link href="https://wrong.example/" rel="alternate"/>
            <link>https://example.org/cafe</link>
            <guid>https://example.org/?p=42</guid>
            <pubDate>Sun, 30 Mar 2025 08:15:00 GMT</pubDate>
            <description>&lt;p&gt;Escaped &lt;em&gt;HTML&lt;/em&gt; &amp;amp; entities&lt;/p&gt;&lt;script&gt;alert(1)&lt;/script&gt;</description>
          </item>
          <item>
            <title>Again</title>
            <guid isPermaLink="false">swift-6.1-released</guid>
          </item>
          <item>
            <title>Only content</title>
            <guid>https://example.org/only</guid>
            <content:encoded>&lt;ul&gt;&lt;li&gt;one&lt;/li&gt;&lt;li&gt;two&lt;/li&gt;&lt;/ul&gt;</content:encoded>
          </item>
        </channel>
        </rss>
        """

    @Test func readsRSS2WithCDATAAndEntities() throws {
        let entries = try parse(Self.rss)
        #expect(
            entries.map(\.id) == [
                "swift-6.1-released", "https://example.org/?p=42", "https://example.org/only",
            ])
        let first = entries[0]
        #expect(first.title == "Swift 6.1 & the new tools")
        #expect(
            first.summary == "Swift 6.1 is now available \u{2014} with faster builds.\n\nSecond paragraph.")
        #expect(first.link == "https://www.swift.org/blog/swift-6.1-released/")
        #expect(first.published == date("2025-03-31T17:00:00Z"))
        let second = entries[1]
        #expect(second.title == "Café & crème")
        #expect(second.summary == "Escaped HTML & entities", "a script is no text")
        #expect(second.link == "https://example.org/cafe", "the atom:link is not the item's link")
        #expect(second.published == date("2025-03-30T08:15:00Z"))
        // No description: the summary is content:encoded; no link: the guid, a permalink, is one.
        #expect(entries[2].summary == "one\ntwo")
        #expect(entries[2].link == "https://example.org/only")
        #expect(entries[2].published == nil)
    }

    /// RSS 0.92, in Latin-1: no guids, a relative link, an item with no link at all, one whose link
    /// is not a page.
    static let withoutGuids = """
        <?xml version="1.0" encoding="ISO-8859-1"?>
        <rss version="0.92">
        <channel>
          <title>Old school</title>
          <item><title>Third</title><link>/posts/3</link><description>Newest</description></item>
          <item><title>Second</title><link>
              https://example.org/posts/2
          </link></item>
          <item><title>No link</title><description>Just text</description></item>
          <item><title>Mail</title><link>mailto:me@example.org</link></item>
          <item><title>No link</title><description>Just text</description></item>
        </channel>
        </rss>
        """

    @Test func entriesWithoutGuidsAreKnownByTheirLinkOrByAHash() throws {
        let entries = try parse(Self.withoutGuids)
        #expect(entries.map(\.title) == ["Third", "Second", "No link", "Mail"], "a repeat is dropped")
        #expect(entries[0].id == "https://example.org/posts/3", "resolved against the feed's URL")
        #expect(entries[0].link == "https://example.org/posts/3")
        #expect(entries[1].id == "https://example.org/posts/2", "trimmed")
        #expect(entries[2].id == "sha256:" + SHA256.hex("No link\nJust text"))
        #expect(entries[2].link == nil)
        #expect(entries[3].link == nil, "a mailto: link is no page to read")
        #expect(entries[3].id == "sha256:" + SHA256.hex("Mail\n"))
        #expect(entries.allSatisfy { $0.published == nil })
    }

    /// Atom 1.0: several links (self, enclosure, two alternates), typed text, xhtml content, an
    /// entry's `<source>` with its own id and title, an entry without an id.
    static let atom = """
        <?xml version="1.0" encoding="utf-8"?>
        <feed xmlns="http://www.w3.org/2005/Atom">
          <title>Example Feed</title>
          <link href="http://example.org/"/>
          <updated>2003-12-13T18:30:02Z</updated>
          <id>urn:uuid:60a76c80-d399-11d9-b93C-0003939e0af6</id>
          <entry>
            <title type="html">Atom &lt;i&gt;draft&lt;/i&gt; &amp;amp; more</title>
            <link rel="self" href="https://example.org/entries/1.atom"/>
            <link rel="enclosure" href="https://example.org/audio.mp3"/>
            <link rel="alternate" type="text/html" href="/2003/12/13/atom03"/>
            <link rel="alternate" type="text/html" href="https://example.org/second-alternate"/>
            <id> urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a </id>
            <published>2003-12-13T08:29:29-04:00</published>
            <updated>2003-12-14T10:20:05.123Z</updated>
            <summary type="text">Some text &amp; a &lt;tag&gt; kept as text.</summary>
            <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Full</p></div></content>
            <source><id>urn:other</id><title>Other</title></source>
          </entry>
          <entry>
            <title>Second</title>
            <link href="https://example.org/two"/>
            <id>tag:example.org,2003:2</id>
            <updated>2003-12-12T00:00:00Z</updated>
            <content type="xhtml">
              <div xmlns="http://www.w3.org/1999/xhtml">
                <p>One &amp; two &lt; three</p><ul><li>a</li><li>b</li></ul>
              </div>
            </content>
          </entry>
          <entry>
            <title>Entry without id</title>
            <link href="https://example.org/three"/>
            <summary type="html">&lt;p&gt;HTML summary&lt;/p&gt;</summary>
          </entry>
        </feed>
        """

    @Test func readsAtomLinksTypesAndXHTML() throws {
        let entries = try parse(Self.atom)
        #expect(
            entries.map(\.id) == [
                "urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a", "tag:example.org,2003:2",
                "https://example.org/three",
            ])
        let first = entries[0]
        #expect(first.title == "Atom draft & more")
        #expect(first.link == "https://example.org/2003/12/13/atom03", "the first alternate, resolved")
        #expect(first.summary == "Some text & a <tag> kept as text.", "type text is not HTML")
        #expect(first.published == date("2003-12-13T12:29:29Z"), "published, not updated")
        #expect(entries[1].summary == "One & two < three\n\na\nb", "xhtml content, its text kept as text")
        #expect(entries[1].published == date("2003-12-12T00:00:00Z"), "updated when not published")
        #expect(entries[2].summary == "HTML summary")
        #expect(entries[2].published == nil)
    }

    /// RSS 1.0: items beside the channel, ids in `rdf:about`, dates in `dc:date`.
    static let rdf = """
        <?xml version="1.0"?>
        <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
            xmlns:dc="http://purl.org/dc/elements/1.1/">
          <channel rdf:about="http://www.xml.com/xml/news.rss">
            <title>XML.com</title>
            <link>http://xml.com/pub</link>
            <items><rdf:Seq><rdf:li resource="http://xml.com/pub/2000/08/09/xslt/xslt.html"/></rdf:Seq></items>
          </channel>
          <item rdf:about="urn:xml.com:xslt">
            <title>Processing Inclusions with XSLT</title>
            <link>http://xml.com/pub/2000/08/09/xslt/xslt.html</link>
            <description>Processing document inclusions with general XML tools can be problematic.</description>
            <dc:date>2000-08-09T12:00:00+01:00</dc:date>
          </item>
        </rdf:RDF>
        """

    @Test func readsRSS1() throws {
        let entries = try parse(Self.rdf)
        let expected = FeedEntry(
            id: "urn:xml.com:xslt", title: "Processing Inclusions with XSLT",
            summary: "Processing document inclusions with general XML tools can be problematic.",
            link: "http://xml.com/pub/2000/08/09/xslt/xslt.html", published: date("2000-08-09T11:00:00Z"))
        #expect(entries == [expected])
    }

    @Test func aFeedWithoutEntriesIsEmpty() throws {
        #expect(try parse("<rss version=\"2.0\"><channel><title>Quiet</title></channel></rss>").isEmpty)
        #expect(try parse("<feed xmlns=\"http://www.w3.org/2005/Atom\"><title>Quiet</title></feed>").isEmpty)
    }

    @Test func malformedXMLNamesTheFeedLineColumnAndProblem() throws {
        let mismatch = failure(
            "<?xml version=\"1.0\"?>\n<rss><channel>\n  <item><title>x</titl></item>\n</channel></rss>")
        #expect(mismatch?.code == .malformed)
        #expect(
            mismatch?.description
                == "feed \(Self.url) is not RSS or Atom: line 3, column 24: malformed XML: "
                + "a closing tag does not match the element it closes")
        let ampersand = failure("<rss><channel><item><title>Tom & Jerry</title></item></channel></rss>")
        #expect(ampersand?.line == 1 && ampersand?.column == 33)
        #expect(ampersand?.problem.contains("a bare '&' must be written '&amp;'") == true)
        let cut = failure("<rss><channel>\n<item><title>Cut off")
        #expect(cut?.code == .malformed)
        #expect(cut?.line == 2)
        #expect(cut?.problem.contains("ends before its elements are closed") == true)
        let entity = failure("<rss><channel><item><title>&nbsp;</title></item></channel></rss>")
        #expect(entity?.problem.contains("undeclared entity") == true)
        let json = failure("{\"items\": []}")
        #expect(
            json?.description == "feed \(Self.url) is not RSS or Atom: line 1, column 1: malformed XML: "
                + "expected '<' to start an XML document")
    }

    @Test func wellFormedXMLThatIsNotAFeedIsRefused() throws {
        let page = failure("<!DOCTYPE html>\n<html><head><title>x</title></head><body/></html>")
        #expect(page?.code == .notAFeed)
        #expect(
            page?.description
                == "feed \(Self.url) is not RSS or Atom: line 2, column 6: "
                + "expected <rss>, Atom's <feed> or RSS 1.0's <rdf:RDF> at the root, got <html>")
        let other = failure("<x:doc xmlns:x=\"urn:x\"><item/></x:doc>")
        #expect(other?.problem.hasSuffix("got <doc> in namespace urn:x") == true)
        let empty = failure("")
        #expect(empty?.code == .notAFeed)
        #expect(empty?.problem.hasSuffix("got an empty document") == true)
    }

    /// A feed declaring an external entity must not make offpeak read the file it names.
    @Test func externalEntitiesAreNotResolved() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("feed-xxe-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let secret = folder.appendingPathComponent("secret.txt")
        try "TOP-SECRET-\(UUID())".write(to: secret, atomically: true, encoding: .utf8)
        let marker = "TOP-SECRET-"
        let general = """
            <?xml version="1.0"?>
            <!DOCTYPE rss [<!ENTITY xxe SYSTEM "\(secret.absoluteString)">]>
            <rss version="2.0"><channel><item><title>a &xxe; b</title><description>&xxe;</description>
            <guid>https://example.org/1</guid></item></channel></rss>
            """
        let parameter = """
            <?xml version="1.0"?>
            <!DOCTYPE rss [<!ENTITY % p SYSTEM "\(secret.absoluteString)"> %p;]>
            <rss version="2.0"><channel><item><title>a</title></item></channel></rss>
            """
        for xml in [general, parameter] {
            do {
                let entries = try parse(xml)
                #expect(!entries.contains { "\($0)".contains(marker) })
            } catch {
                #expect(!error.description.contains(marker))
            }
        }
    }

    @Test func refusesMoreThanTenThousandEntries() throws {
        func feed(_ count: Int) -> String {
            "<rss><channel>" + (0..<count).map { "<item><guid>\($0)</guid></item>" }.joined()
                + "</channel></rss>"
        }
        #expect(try parse(feed(Feed.maxEntries)).count == 10_000)
        let tooMany = failure(feed(Feed.maxEntries + 1))
        #expect(tooMany?.code == .tooManyEntries)
        #expect(tooMany?.description.hasPrefix("feed \(Self.url) is too long: line 1, column ") == true)
        #expect(tooMany?.problem == "more than 10000 entries (offpeak reads at most 10000)")
    }

    @Test func oldestFirstGoesByDateAndUndatedOnesByPlaceFromTheEnd() {
        func entry(_ id: String, _ date: String?) -> FeedEntry {
            FeedEntry(
                id: id, title: id, summary: "", link: nil, published: date.flatMap { FeedDate.rfc3339($0) })
        }
        // Newest first, as feeds list them; c has no date and sits just above d.
        let feed = [
            entry("a", "2025-03-05T00:00:00Z"), entry("b", "2025-03-04T00:00:00Z"), entry("c", nil),
            entry("d", "2025-03-02T00:00:00Z"), entry("e", nil), entry("f", nil),
        ]
        #expect(Feed.oldestFirst(feed).map(\.id) == ["f", "e", "d", "c", "b", "a"])
        let undated = ["x", "y", "z"].map { entry($0, nil) }
        #expect(Feed.oldestFirst(undated).map(\.id) == ["z", "y", "x"])
        let shuffled = [
            entry("new", "2025-01-02T00:00:00Z"), entry("old", "2024-01-01T00:00:00Z"),
            entry("mid", "2024-06-01T00:00:00Z"),
        ]
        #expect(Feed.oldestFirst(shuffled).map(\.id) == ["old", "mid", "new"])
        let tied = [entry("later", "2024-01-01T00:00:00Z"), entry("earlier", "2024-01-01T00:00:00Z")]
        #expect(Feed.oldestFirst(tied).map(\.id) == ["earlier", "later"])
    }
}
