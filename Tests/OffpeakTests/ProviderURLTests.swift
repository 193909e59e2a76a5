import Foundation
import Testing

@testable import Offpeak

/// The rule for URLs a provider hands back (issue 21, item 2): resolved against the base URL by
/// RFC 3986, the base URL taken as a folder; fetched as resolved on the base URL's origin only, the
/// documented endpoint under the base URL otherwise, so the key never leaves the base URL's host.
struct ProviderURLTests {
    static let documented = "/v1/messages/batches/msgbatch_1/results"

    static func resolve(_ reference: String?, base: String) throws -> ProviderURL {
        try ProviderURL.resolve(reference, base: base, documented: documented)
    }

    /// RFC 3986 section 5.4: the normal and abnormal examples, against `http://a/b/c/d;p?q`.
    static let rfcExamples: [(String, String)] = [
        ("g:h", "g:h"), ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"),
        ("/g", "http://a/g"), ("//g", "http://g"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"),
        ("#s", "http://a/b/c/d;p?q#s"), ("g#s", "http://a/b/c/g#s"), ("g?y#s", "http://a/b/c/g?y#s"),
        (";x", "http://a/b/c/;x"), ("g;x", "http://a/b/c/g;x"), ("g;x?y#s", "http://a/b/c/g;x?y#s"),
        (".", "http://a/b/c/"), ("./", "http://a/b/c/"), ("..", "http://a/b/"), ("../", "http://a/b/"),
        ("../g", "http://a/b/g"), ("../..", "http://a/"), ("../../", "http://a/"), ("../../g", "http://a/g"),
        ("../../../g", "http://a/g"), ("../../../../g", "http://a/g"), ("/./g", "http://a/g"),
        ("/../g", "http://a/g"), ("g.", "http://a/b/c/g."), (".g", "http://a/b/c/.g"),
        ("g..", "http://a/b/c/g.."),
        ("..g", "http://a/b/c/..g"), ("./../g", "http://a/b/g"), ("./g/.", "http://a/b/c/g/"),
        ("g/./h", "http://a/b/c/g/h"), ("g/../h", "http://a/b/c/h"), ("g;x=1/./y", "http://a/b/c/g;x=1/y"),
        ("g;x=1/../y", "http://a/b/c/y"), ("g?y/./x", "http://a/b/c/g?y/./x"),
        ("g?y/../x", "http://a/b/c/g?y/../x"),
        ("g#s/./x", "http://a/b/c/g#s/./x"), ("g#s/../x", "http://a/b/c/g#s/../x"), ("http:g", "http:g"),
    ]

    /// What `ProviderURL` stands on: Foundation's `URL(string:relativeTo:)` gives every example of
    /// RFC 3986 section 5.4 (the empty reference, which it refuses, means "none given" here).
    @Test func foundationResolvesEveryExampleOfRFC3986() throws {
        let base = try #require(URL(string: "http://a/b/c/d;p?q"))
        for (reference, expected) in Self.rfcExamples {
            #expect(
                URL(string: reference, relativeTo: base)?.absoluteURL.absoluteString == expected,
                "\(reference)")
        }
    }

    /// Against the base URL `http://a/b/c` (a folder, as base URLs are), each example that does not
    /// lean on the RFC base's last segment or query resolves as the RFC says, less the fragment
    /// (never sent); `g:h` and `http:g` are not http URLs and are refused (below).
    @Test func referencesResolveAsRFC3986SaysAgainstTheBaseURLAsAFolder() throws {
        for (reference, expected) in Self.rfcExamples
        where !["?y", "#s", "g:h", "http:g"].contains(reference) {
            var url = expected
            if let hash = url.firstIndex(of: "#") { url = String(url[..<hash]) }
            let want =
                url.hasPrefix("http://a/")
                ? ProviderURL(url: url)
                : ProviderURL(
                    url: "http://a/b/c" + Self.documented, elsewhere: url)
            #expect(try Self.resolve(reference, base: "http://a/b/c") == want, "\(reference)")
        }
    }

    @Test func aPathIsResolvedAgainstTheBaseURLsOriginAndAPrefixIsNotDoubled() throws {
        let base = "http://127.0.0.1:8080/anthropic"
        let path = "/anthropic/v1/messages/batches/msgbatch_1/results"
        #expect(try Self.resolve(path, base: base).url == "http://127.0.0.1:8080" + path)
        #expect(try Self.resolve(path, base: base + "/").url == "http://127.0.0.1:8080" + path)
        // A relative path lands under the base URL, whether or not it ends in a slash.
        let relative = "v1/messages/batches/msgbatch_1/results"
        #expect(try Self.resolve(relative, base: base).url == "http://127.0.0.1:8080/anthropic/" + relative)
        #expect(
            try Self.resolve(relative, base: base + "/").url == "http://127.0.0.1:8080/anthropic/" + relative)
        #expect(
            try Self.resolve("/v1/x", base: "https://api.anthropic.com").url
                == "https://api.anthropic.com/v1/x")
    }

    @Test func noURLMeansTheDocumentedEndpointUnderTheBaseURL() throws {
        let base = "http://127.0.0.1:8080/anthropic/"
        let documented = ProviderURL(url: "http://127.0.0.1:8080/anthropic" + Self.documented)
        #expect(try Self.resolve(nil, base: base) == documented)
        #expect(try Self.resolve("", base: base) == documented)
    }

    @Test func theSameOriginSpelledAnotherWayIsFetchedAsGiven() throws {
        let given = "HTTPS://API.Anthropic.com:443/v1/messages/batches/msgbatch_1/results?page=2"
        #expect(try Self.resolve(given, base: "https://api.anthropic.com").url == given)
        let http = "http://localhost/v1/x"
        #expect(try Self.resolve(http, base: "http://LOCALHOST:80").url == http)
    }

    /// Another origin (host, port or scheme) is never fetched: the key would go with it.
    @Test(arguments: [
        "https://api.anthropic.com/v1/messages/batches/msgbatch_1/results",
        "//api.anthropic.com/v1/messages/batches/msgbatch_1/results",
        "http://127.0.0.1:9090/anthropic/v1/messages/batches/msgbatch_1/results",
        "https://127.0.0.1:8080/anthropic/v1/messages/batches/msgbatch_1/results",
        "http://127.0.0.2:8080/anthropic/v1/messages/batches/msgbatch_1/results",
    ])
    func anotherOriginIsAskedOfTheBaseURLAtTheDocumentedEndpoint(given: String) throws {
        let resolved = try Self.resolve(given, base: "http://127.0.0.1:8080/anthropic")
        let named = given.hasPrefix("//") ? "http:" + given : given
        #expect(
            resolved
                == ProviderURL(url: "http://127.0.0.1:8080/anthropic" + Self.documented, elsewhere: named))
    }

    /// Not a URL, or not one offpeak may fetch: refused, not transient, naming what was given.
    @Test(arguments: [
        ("/anthropic/v1/has space", #""/anthropic/v1/has space""#),
        ("/v1/%zz", #""/v1/%zz""#),
        ("file:///etc/passwd", #""file:///etc/passwd""#),
        ("javascript:alert(1)", #""javascript:alert(1)""#),
        ("http:/no-host", #""http:/no-host""#),
        ("/v1/x\n", #""/v1/x\n""#),
        ("/v1/é", #""/v1/é""#),
        ("g:h", #""g:h""#),
    ])
    func aReferenceThatIsNotAnHTTPURLIsRefusedByName(given: String, shown: String) {
        #expect(throws: ProviderError.badResponse("the provider's URL \(shown) is not an http or https URL"))
        {
            try Self.resolve(given, base: "http://127.0.0.1:8080/anthropic")
        }
        let error = ProviderError.badResponse("x")
        #expect(!error.isTransient)
    }
}
