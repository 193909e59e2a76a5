import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak
@testable import OffpeakSimKit

/// The sim's research-source routes, over plain HTTP (no redirects followed, no type checks).
@Suite(.ownThreads) struct SimSourcesTests {
    let client = HTTPClient()

    func get(_ sim: SimProcess, _ path: String, headers: [(name: String, value: String)] = []) throws
        -> Offpeak.HTTPResponse
    {
        try client.send(HTTPRequest(url: sim.url + path, headers: headers))
    }

    @Test func servesDeterministicDocumentsWithValidators() throws {
        let sim = try SimProcess()
        let text = try get(sim, "/sources/alpha")
        #expect(text.status == 200)
        #expect(text.header("content-type") == "text/plain; charset=utf-8")
        #expect(text.header("last-modified") == "Wed, 01 Jan 2025 00:00:00 GMT")
        let body = String(decoding: text.body, as: UTF8.self)
        #expect(body.components(separatedBy: "alpha").count - 1 == 3)
        #expect(Array(text.body) == SourceLibrary.text(name: "alpha").body)
        #expect(text.header("etag") == SourceLibrary.text(name: "alpha").etag)
        let again = try get(sim, "/sources/alpha")
        #expect(again.header("etag") == text.header("etag") && again.body == text.body)

        let html = try get(sim, "/sources/alpha.html")
        #expect(html.header("content-type") == "text/html; charset=utf-8")
        #expect(String(decoding: html.body, as: UTF8.self).contains("<h1>Source alpha</h1>"))
        #expect(html.header("etag") != text.header("etag"))
    }

    @Test func answersAMatchingIfNoneMatchWith304() throws {
        let sim = try SimProcess()
        let etag = try #require(try get(sim, "/sources/beta").header("etag"))
        let notModified = try get(sim, "/sources/beta", headers: [(name: "If-None-Match", value: etag)])
        #expect(notModified.status == 304 && notModified.body.isEmpty)
        #expect(notModified.header("etag") == etag)
        let other = try get(sim, "/sources/beta", headers: [(name: "If-None-Match", value: "\"other\"")])
        #expect(other.status == 200)
        let stats = try #require(try sim.stats()["sources"] as? [String: Int])
        #expect(stats == ["fetches": 3, "not_modified": 1])
    }

    @Test func uploadsReplaceDocumentsUntilReset() throws {
        let sim = try SimProcess()
        let before = try get(sim, "/sources/gamma")
        try SimSources.set(sim, name: "gamma", content: "<p>New</p>", contentType: "text/html")
        let after = try get(sim, "/sources/gamma")
        #expect(String(decoding: after.body, as: UTF8.self) == "<p>New</p>")
        #expect(after.header("content-type") == "text/html")
        #expect(after.header("etag") != before.header("etag"))
        _ = try sim.request("POST", "/sim/reset")
        #expect(try get(sim, "/sources/gamma") == before)
        let stats = try #require(try sim.stats()["sources"] as? [String: Int])
        #expect(stats == ["fetches": 1, "not_modified": 0])
        let bad = try sim.request("POST", "/sim/sources", body: Data(#"{"name": "x"}"#.utf8))
        #expect(String(decoding: bad, as: UTF8.self).contains("content"))
    }

    @Test func redirectsBinariesAndErrorStatuses() throws {
        let sim = try SimProcess()
        let redirect = try get(sim, "/sources/redirect/delta")
        #expect(redirect.status == 302)
        #expect(redirect.header("location") == "/sources/delta")
        let pdf = try get(sim, "/sources/binary/delta")
        #expect(pdf.header("content-type") == "application/pdf")
        #expect(pdf.body.starts(with: Data("%PDF-".utf8)))
        #expect(try get(sim, "/sources/status/503").status == 503)
        #expect(try get(sim, "/sources/status/200").status == 400)
    }

    @Test func robotsTxtIsMissingUntilSetAndCountedApart() throws {
        let sim = try SimProcess()
        #expect(try get(sim, "/robots.txt").status == 404)
        try SimSources.set(sim, name: "robots.txt", content: "User-agent: *\nDisallow: /private\n")
        let robots = try get(sim, "/robots.txt")
        #expect(robots.status == 200)
        #expect(String(decoding: robots.body, as: UTF8.self) == "User-agent: *\nDisallow: /private\n")
        let etag = try #require(robots.header("etag"))
        #expect(try get(sim, "/robots.txt", headers: [(name: "If-None-Match", value: etag)]).status == 304)
        let stats = try #require(try sim.stats()["sources"] as? [String: Int])
        #expect(stats == ["fetches": 0, "not_modified": 0, "robots": 3])
    }

    @Test func movedPagesAnswer301And308() throws {
        let sim = try SimProcess()
        let moved = try get(sim, "/sources/moved/delta")
        #expect(moved.status == 301 && moved.header("location") == "/sources/delta")
        let moved308 = try get(sim, "/sources/moved308/delta")
        #expect(moved308.status == 308 && moved308.header("location") == "/sources/delta")
    }

    @Test func etagsAreStableHashesAndMatchingIsWeak() {
        #expect(SourceLibrary.hash([]) == "cbf29ce484222325")
        #expect(SourceLibrary.hash(Array("a".utf8)) == "af63dc4c8601ec8c")
        #expect(SourceRoutes.matches("\"x\", W/\"abc\"", etag: "\"abc\""))
        #expect(SourceRoutes.matches("*", etag: "\"abc\""))
        #expect(!SourceRoutes.matches("\"abcd\"", etag: "\"abc\""))
    }
}
