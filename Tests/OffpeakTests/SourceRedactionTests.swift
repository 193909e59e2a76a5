import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Research sources are text from outside too: the fetched page, its type and validators, and
/// every fetch error (the server's reason, libcurl's message, the URL) are redacted.
@Suite(.ownThreads) struct SourceRedactionTests {
    static let key = "sk-ant-MARKER-source-0123"
    let fetcher = SourceFetcher(
        client: HTTPClient(), connectTimeout: 5, timeout: 10,
        redactor: Redactor(environment: ["ANTHROPIC_API_KEY": key]))

    func failure(_ url: String) -> SourceError? {
        do {
            _ = try fetcher.fetch(url)
            Issue.record("expected an error for \(url)")
            return nil
        } catch {
            return error
        }
    }

    @Test func aPageCarryingAKeyIsKeptWithoutIt() throws {
        let sim = try SimProcess()
        try SimSources.set(
            sim, name: "leaky",
            content:
                "Our setup: ANTHROPIC_API_KEY=\(Self.key)\nTry curl -H 'Authorization: Bearer abc123def456'.\n"
        )
        guard case .fetched(let source) = try fetcher.fetch(sim.url + "/sources/leaky") else {
            Issue.record("expected a fetched page")
            return
        }
        #expect(
            source.text
                == "Our setup: ANTHROPIC_API_KEY=[redacted]\nTry curl -H 'Authorization: Bearer [redacted]'.\n"
        )
        try SimSources.set(
            sim, name: "leaky.html", content: "<p>key: <b>\(Self.key)</b></p>", contentType: "text/html")
        guard case .fetched(let page) = try fetcher.fetch(sim.url + "/sources/leaky.html") else {
            Issue.record("expected a fetched page")
            return
        }
        #expect(page.text == "key: [redacted]")
    }

    @Test func anErrorPageEchoingAKeyGivesItsReasonWithoutIt() throws {
        let sim = try SimProcess()
        try SimSources.set(
            sim, name: "denied", content: "Invalid token \(Self.key) for\nthis resource.", status: 401)
        let url = sim.url + "/sources/denied"
        #expect(failure(url) == .http(url, 401, reason: "Invalid token [redacted] for this resource."))
        #expect(
            failure(url)?.description
                == "source \(url) answered HTTP 401: Invalid token [redacted] for this resource.")
        try SimSources.set(
            sim, name: "page",
            content: "<html><body><h1>Forbidden</h1><p>x-api-key: abc123def456</p></body></html>",
            contentType: "text/html", status: 403)
        #expect(
            failure(sim.url + "/sources/page")
                == .http(sim.url + "/sources/page", 403, reason: "Forbidden x-api-key: [redacted]"))
    }

    @Test func aURLWithCredentialsIsNamedWithoutThem() throws {
        let sim = try SimProcess()
        let host = sim.url.replacingOccurrences(of: "http://", with: "")
        let error = failure("http://reader:pa55-word@\(host)/sources/status/403?access_token=0123456789")
        #expect(
            error?.description
                == "source http://[redacted]@\(host)/sources/status/403?access_token=[redacted] answered HTTP 403: status 403"
        )
        sim.kill()
        guard case .unreachable(let url, _) = failure("http://reader:pa55-word@\(host)/sources/alpha") else {
            Issue.record("expected .unreachable")
            return
        }
        #expect(url == "http://[redacted]@\(host)/sources/alpha")
    }
}
