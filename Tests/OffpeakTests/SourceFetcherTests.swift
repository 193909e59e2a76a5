import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// `SourceFetcher` against the real `offpeak-sim` binary, which serves deterministic sources.
@Suite(.ownThreads) struct SourceFetcherTests {
    let fetcher = SourceFetcher(client: HTTPClient(), connectTimeout: 5, timeout: 10)

    /// The copy a fetch must bring back, or a recorded issue.
    func fetched(_ url: String, with fetcher: SourceFetcher? = nil) throws -> CachedSource {
        let outcome = try (fetcher ?? self.fetcher).fetch(url, now: Date(timeIntervalSince1970: 1000))
        guard case .fetched(let source) = outcome else {
            Issue.record("expected a fetched copy of \(url), got \(outcome)")
            throw SourceError.notText(url)
        }
        return source
    }

    /// The error a fetch must throw.
    func failure(_ url: String, with fetcher: SourceFetcher? = nil) -> SourceError? {
        do {
            let outcome = try (fetcher ?? self.fetcher).fetch(url)
            Issue.record("expected an error for \(url), got \(outcome)")
            return nil
        } catch {
            return error
        }
    }

    @Test func fetchesPlainTextWithItsValidators() throws {
        let sim = try SimProcess()
        let url = sim.url + "/sources/alpha"
        let source = try fetched(url)
        #expect(source.url == url)
        #expect(source.contentType == "text/plain")
        #expect(source.text.hasPrefix("This is the research source named alpha, served by offpeak-sim."))
        #expect(source.etag?.hasPrefix("\"") == true && source.etag?.count == 18)
        #expect(source.lastModified == "Wed, 01 Jan 2025 00:00:00 GMT")
        #expect(source.fetchedAt == Date(timeIntervalSince1970: 1000))
        #expect(try fetched(url) == source)
    }

    @Test func turnsHTMLIntoReadableText() throws {
        let sim = try SimProcess()
        let source = try fetched(sim.url + "/sources/beta.html")
        #expect(source.contentType == "text/html")
        #expect(
            source.text == """
                Source beta

                This is the research source named beta, served as HTML by offpeak-sim.

                Fish & chips <3 "quoted" 'single' \u{263A} smile.

                first point
                second point
                """)
    }

    @Test func followsRedirectsUpToTheLimit() throws {
        let sim = try SimProcess()
        let url = sim.url + "/sources/redirect/gamma"
        let source = try fetched(url)
        #expect(source.url == url)
        #expect(source.text.contains("named gamma"))
        let noRedirects = SourceFetcher(client: HTTPClient(), maxRedirects: 0)
        #expect(failure(url, with: noRedirects) == .http(url, 302))
    }

    @Test func revalidatesWithTheETag() throws {
        let sim = try SimProcess()
        let url = sim.url + "/sources/delta"
        let first = try fetched(url)
        #expect(try fetcher.fetch(url, etag: first.etag, lastModified: first.lastModified) == .notModified)
        let stats = try #require(try sim.stats()["sources"] as? [String: Int])
        #expect(stats == ["fetches": 2, "not_modified": 1])
        // New content, new ETag: the old one no longer matches.
        try SimSources.set(sim, name: "delta", content: "Delta, revised.")
        let second = try fetched(url)
        #expect(second.text == "Delta, revised.")
        #expect(second.etag != first.etag)
        #expect(try fetcher.fetch(url, etag: first.etag, now: second.fetchedAt) == .fetched(second))
    }

    @Test func refusesWhatIsNotText() throws {
        let sim = try SimProcess()
        let pdf = sim.url + "/sources/binary/report"
        #expect(failure(pdf) == .unsupportedType(pdf, "application/pdf"))
        let missing = sim.url + "/sources/status/404"
        #expect(failure(missing) == .http(missing, 404, reason: "status 404"))
        #expect(failure(missing)?.description == "source \(missing) answered HTTP 404: status 404")
        try SimSources.set(sim, name: "nul", content: "a\u{0}b")
        #expect(failure(sim.url + "/sources/nul") == .notText(sim.url + "/sources/nul"))
        try SimSources.set(sim, name: "data.json", content: #"{"a": 1}"#, contentType: "application/ld+json")
        #expect(try fetched(sim.url + "/sources/data.json").text == #"{"a": 1}"#)
    }

    @Test func capsTheBodySize() throws {
        let sim = try SimProcess()
        let big = sim.url + "/sources/big"
        try SimSources.set(sim, name: "big", content: String(repeating: "word ", count: 500_000))
        #expect(failure(big) == .tooLarge(big, SourceFetcher.defaultMaxBytes))
        let small = SourceFetcher(client: HTTPClient(), maxBytes: 100)
        #expect(
            failure(sim.url + "/sources/alpha", with: small) == .tooLarge(sim.url + "/sources/alpha", 100))
    }

    @Test func aClosedPortIsUnreachable() throws {
        let sim = try SimProcess()
        sim.kill()
        let url = sim.url + "/sources/alpha"
        guard case .unreachable(let failed, let why) = failure(url) else {
            Issue.record("expected .unreachable")
            return
        }
        #expect(failed == url && !why.isEmpty)
        #expect(SourceError.unreachable(url, why).description == "source \(url) unreachable: \(why)")
    }

    @Test func decodesTheDeclaredCharset() {
        let latin1 = Data([0x63, 0x61, 0x66, 0xE9])
        #expect(MediaType("text/plain; charset=ISO-8859-1").decode(latin1) == "café")
        #expect(MediaType("text/plain").decode(latin1) == nil)
        #expect(MediaType("text/plain; charset=\"utf-8\"").decode(Data("\u{FEFF}hi".utf8)) == "hi")
        #expect(MediaType(nil).essence == "text/plain")
        #expect(MediaType("Application/XHTML+XML").isHTML)
        for type in [
            "text/csv", "application/json", "application/xml", "application/atom+xml", "application/ld+json",
        ] {
            #expect(MediaType(type).isText, "\(type)")
        }
        for type in ["application/pdf", "image/png", "application/octet-stream"] {
            #expect(!MediaType(type).isText, "\(type)")
        }
    }
}

/// Replacing the sim's documents through `POST /sim/sources` (with `HTTPClient`: a large body
/// does not fit on a curl command line).
enum SimSources {
    static func set(
        _ sim: SimProcess, name: String, content: String, contentType: String = "text/plain",
        status: Int = 200
    ) throws {
        let body = try JSONSerialization.data(
            withJSONObject: ["name": name, "content": content, "content_type": contentType, "status": status])
        let request = HTTPRequest(
            method: "POST", url: sim.url + "/sim/sources",
            headers: [(name: "Content-Type", value: "application/json")],
            body: Array(body))
        let response = try HTTPClient().send(request)
        guard response.status == 200 else {
            throw SimProcess.SimError.badReply(String(decoding: response.body, as: UTF8.self))
        }
    }
}

/// `HTMLText`, the fetcher's HTML-to-text step, on its own.
@Suite(.ownThreads) struct SourceFetcherHTMLTextTests {
    @Test func dropsScriptsStylesAndTheHead() {
        let html = """
            <html><head><title>T</title><meta charset="utf-8"></head>
            <body><SCRIPT type="text/javascript">if (a < b) { x = "</p>"; }</SCRIPT>
            <style>p{}</style><noscript>enable js</noscript><!-- a <p> comment -->Kept <b>words</b>.</body></html>
            """
        #expect(HTMLText.text(fromHTML: html) == "Kept words.")
    }

    @Test func blockElementsBreakLinesAndInlineOnesDoNot() {
        let html =
            "<h2>Title</h2><p>One <a href=\"x\">link</a>,\n  un<i>usual</i>.</p><div>A</div><div>B<br>C</div>"
            + "<ul><li>x</li>\n<li>y</li></ul><table><tr><td>1</td><td>2</td></tr></table>"
        #expect(HTMLText.text(fromHTML: html) == "Title\n\nOne link, unusual.\n\nA\nB\nC\n\nx\ny\n\n1 2")
    }

    @Test func decodesEntities() {
        #expect(
            HTMLText.decodeEntities("&amp; &lt; &gt; &quot; &#39; &#169; &#xE9; &#X263a;")
                == "& < > \" ' © é ☺")
        #expect(HTMLText.decodeEntities("a&nbsp;b &#160;c") == "a b  c")
        // Unknown, unterminated and invalid entities stay as written.
        #expect(HTMLText.decodeEntities("&bogus; AT&T &#0; &#xD800; &") == "&bogus; AT&T &#0; &#xD800; &")
        #expect(HTMLText.text(fromHTML: "<p>Tom&nbsp;&amp;&nbsp;Jerry &lt;b&gt;</p>") == "Tom & Jerry <b>")
    }

    @Test func malformedMarkupKeepsItsText() {
        #expect(HTMLText.text(fromHTML: "1 < 2 and 3 > 2") == "1 < 2 and 3 > 2")
        #expect(HTMLText.text(fromHTML: "<head>no closing head <p>text") == "no closing head\n\ntext")
        #expect(HTMLText.text(fromHTML: "before<script>never closed") == "before")
        #expect(HTMLText.text(fromHTML: "<img alt='a > b' src=x>after") == "after")
        #expect(HTMLText.text(fromHTML: "") == "")
    }
}
