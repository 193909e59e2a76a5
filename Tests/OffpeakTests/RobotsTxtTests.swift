import Foundation
import Testing

@testable import Offpeak

/// `RobotsTxt`, the RFC 9309 parser and matcher, one rule at a time.
struct RobotsTxtTests {
    @Test func offpeaksOwnGroupWinsOverTheStarGroup() {
        let robots = RobotsTxt(
            """
            User-agent: *
            Disallow: /

            User-agent: OffPeak/1.0
            Disallow: /private
            """)
        #expect(robots.allows("https://example.com/public"))
        #expect(!robots.allows("https://example.com/private/page"))
        #expect(robots.rules == [RobotsTxt.Rule(allow: false, pattern: "/private")])
    }

    @Test func theStarGroupAppliesWhenNoGroupNamesOffpeak() {
        let robots = RobotsTxt("User-agent: googlebot\nDisallow: /\n\nUser-agent: *\nDisallow: /tmp/\n")
        #expect(robots.allows("/"))
        #expect(!robots.allows("/tmp/x"))
        #expect(RobotsTxt("User-agent: googlebot\nDisallow: /\n").allows("/anything"), "no group applies")
        #expect(RobotsTxt("").allows("/"))
    }

    @Test func productTokensMatchWholeAndWithoutCase() {
        #expect(!RobotsTxt("User-agent: OFFPEAK\nDisallow: /\n").allows("/a"))
        #expect(
            RobotsTxt("user-AGENT: offpeak-bot\nDisallow: /\nUser-agent: *\nAllow: /\n").allows("/a"),
            "offpeak-bot is another crawler")
        #expect(RobotsTxt("User-agent: offpeakbot\nDisallow: /\n").allows("/a"), "another crawler's name")
        #expect(RobotsTxt.token("offpeak/0.1 (research)") == "offpeak")
        #expect(RobotsTxt.token("*") == "*")
    }

    @Test func severalUserAgentLinesShareOneGroupAndMatchingGroupsCombine() {
        let robots = RobotsTxt(
            """
            User-agent: a
            User-agent: offpeak
            User-agent: b
            Disallow: /one

            User-agent: c
            Disallow: /two

            User-agent: offpeak
            Disallow: /three
            """)
        #expect(!robots.allows("/one") && !robots.allows("/three"))
        #expect(robots.allows("/two"))
    }

    @Test func theLongestMatchWinsAndAllowWinsATie() {
        let robots = RobotsTxt(
            """
            User-agent: *
            Disallow: /docs/
            Allow: /docs/public/
            Disallow: /docs/public/secret
            Allow: /same
            Disallow: /same
            """)
        #expect(!robots.allows("/docs/x"))
        #expect(robots.allows("/docs/public/page"))
        #expect(!robots.allows("/docs/public/secret.html"))
        #expect(robots.allows("/same"), "a tie goes to Allow")
        #expect(robots.allows("/elsewhere"), "no rule matches")
    }

    @Test func wildcardsAndTheEndAnchor() {
        let robots = RobotsTxt(
            """
            User-agent: *
            Disallow: /*.pdf$
            Disallow: /search*q=
            Disallow: /exact$
            """)
        #expect(!robots.allows("/files/report.pdf"))
        #expect(robots.allows("/files/report.pdf?download=1"), "$ anchors the end")
        #expect(!robots.allows("/search/results?lang=en&q=tides"))
        #expect(robots.allows("/search?lang=en"))
        #expect(!robots.allows("/exact") && robots.allows("/exactly"))
        #expect(RobotsTxt.matches("/a*b*c", "/a-x-b-y-c-z"))
        #expect(!RobotsTxt.matches("/a*b*c$", "/a-x-b-y-c-z"))
        #expect(RobotsTxt.matches("*", "/"))
    }

    @Test func percentEncodingIsNormalizedOnBothSides() {
        let robots = RobotsTxt("User-agent: *\nDisallow: /caf%c3%a9\nDisallow: /~joe\nDisallow: /a%2fb\n")
        #expect(!robots.allows("/café/menu"))
        #expect(!robots.allows("https://example.com/caf%C3%A9"))
        #expect(!robots.allows("/%7Ejoe/page"), "an escaped unreserved character is decoded")
        #expect(!robots.allows("/a%2Fb") && robots.allows("/a/b"), "an escaped reserved one is not")
        #expect(RobotsTxt.normalized("/ä b") == "/%C3%A4%20b")
    }

    @Test func commentsLineEndingsAndTheByteOrderMark() {
        let robots = RobotsTxt(
            "\u{FEFF}User-agent: * # everyone\r\nDisallow: /x # not /x\r\n# Disallow: /y\rDisallow: /z")
        #expect(!robots.allows("/x") && !robots.allows("/z"))
        #expect(robots.allows("/y"))
        #expect(robots.rules.count == 2)
    }

    @Test func anEmptyDisallowAllowsAll() {
        #expect(RobotsTxt("User-agent: *\nDisallow:\n").allows("/anything"))
        #expect(RobotsTxt("User-agent: *\nDisallow:\n").rules.isEmpty)
    }

    @Test func rulesBeforeAnyGroupAndUnknownLinesAreIgnored() {
        let robots = RobotsTxt(
            "Disallow: /early\nSitemap: https://e.com/s.xml\nUser-agent: *\nCrawl-delay: 5\nnonsense\nDisallow: /late\n"
        )
        #expect(robots.allows("/early"))
        #expect(!robots.allows("/late"))
    }

    @Test func robotsTxtItselfIsAlwaysAllowed() {
        #expect(RobotsTxt("User-agent: *\nDisallow: /\n").allows("https://example.com/robots.txt"))
        #expect(!RobotsTxt("User-agent: *\nDisallow: /\n").allows("https://example.com/"))
        #expect(!RobotsTxt("User-agent: *\nDisallow: /\n").allows("https://example.com"))
    }

    @Test func onlyTheFirst500KiBAreRead() {
        let filler = String(repeating: "# padding padding padding\n", count: RobotsTxt.maxBytes / 26)
        let robots = RobotsTxt("User-agent: *\nDisallow: /first\n" + filler + "Disallow: /second\n")
        #expect(!robots.allows("/first"))
        #expect(robots.allows("/second"), "past the limit")
    }

    @Test func pathsComeFromTheURL() {
        #expect(RobotsTxt.pathAndQuery(of: "https://e.com") == "/")
        #expect(RobotsTxt.pathAndQuery(of: "https://e.com?q=1") == "/?q=1")
        #expect(RobotsTxt.pathAndQuery(of: "https://user@e.com:8080/a/b?c=d#frag") == "/a/b?c=d")
    }
}
