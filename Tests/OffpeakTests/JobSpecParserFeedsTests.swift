import Foundation
import Testing

@testable import Offpeak

/// `feeds` and `max_new` (issue 24): a research job's RSS or Atom feeds, and how many new entries a
/// run takes.
struct JobSpecParserFeedsTests {
    func parse(_ yaml: String) throws(OffpeakError) -> JobSpec {
        try JobSpecParser.parse(
            yaml: yaml, path: "jobs/test.yaml", workspace: FileManager.default.temporaryDirectory)
    }

    /// Asserts `yaml` fails at `location`, with a message starting with `field: ` and mentioning `text`.
    func expectError(
        _ yaml: String, at location: String, field: String, mentions text: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            let spec = try parse(yaml)
            Issue.record("expected an error, got a spec named \(spec.name)", sourceLocation: sourceLocation)
        } catch {
            #expect(error.status == .dataError, sourceLocation: sourceLocation)
            #expect(error.location == location, "\(error)", sourceLocation: sourceLocation)
            #expect(error.message.hasPrefix("\(field): "), "\(error)", sourceLocation: sourceLocation)
            #expect(error.message.contains(text), "\(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func aResearchJobMayTakeItsItemsFromFeedsAlone() throws {
        let spec = try parse(
            """
            kind: research
            template: "Summarize {{item}} ({{id}}) from {{sources}}"
            feeds:
              - https://www.swift.org/atom.xml
              - http://example.org/rss?tag=swift
            max_new: 5
            """)
        #expect(spec.feeds == ["https://www.swift.org/atom.xml", "http://example.org/rss?tag=swift"])
        #expect(spec.maxNew == 5)
        #expect(spec.items.isEmpty)
        let one = try parse("kind: research\ntemplate: \"{{item}}\"\nfeeds: https://example.org/feed\n")
        #expect(one.feeds == ["https://example.org/feed"])
        #expect(one.maxNew == nil)
        let both = try parse(
            "kind: research\ntemplate: \"{{item}}\"\nitems: [a]\nfeeds: [https://example.org/feed]\nmax_new: 1\n"
        )
        #expect(both.items.map(\.id) == ["1"])
        #expect(both.feeds.count == 1 && both.maxNew == 1)
        let none = try parse("kind: research\ntemplate: \"{{item}}\"\nitems: [a]\n")
        #expect(none.feeds.isEmpty && none.maxNew == nil)
    }

    /// `robots: fail | skip` (issue 46, item 5), for any job with sources; unset is `fail`, and a
    /// spec without it hashes as before it existed.
    @Test func robotsSaysWhatAJobDoesWithAForbiddenPage() throws {
        let skip = try parse("kind: research\ntemplate: \"{{item}}\"\nitems: [a]\nrobots: skip\n")
        #expect(skip.robots == .skip)
        let unset = try parse("kind: research\ntemplate: \"{{item}}\"\nitems: [a]\n")
        #expect(unset.robots == nil && !CanonicalJSON.text(unset).contains("robots"))
        expectError(
            "kind: research\ntemplate: \"{{item}}\"\nitems: [a]\nrobots: ignore\n", at: "jobs/test.yaml:4:9",
            field: "robots", mentions: "'ignore'")
    }

    @Test func feedsAreOnlyForResearchJobs() {
        expectError(
            "kind: prompt\ntemplate: \"{{item}}\"\nitems: [a]\nfeeds: [https://example.org/feed]\n",
            at: "jobs/test.yaml:4:1", field: "feeds",
            mentions: "only a research job reads feeds (this job is kind 'prompt')")
        expectError(
            "kind: summarize\nitems: [a]\nfeeds: https://example.org/feed\n", at: "jobs/test.yaml:3:1",
            field: "feeds", mentions: "kind 'summarize'")
    }

    @Test func badFeedsNameTheEntry() {
        let head = "kind: research\ntemplate: \"{{item}}\"\n"
        expectError(
            head + "feeds:\n  - https://ok.example/feed\n  - ftp://files.example/feed\n",
            at: "jobs/test.yaml:5:5",
            field: "feeds[2]", mentions: "expected an http or https URL, got 'ftp://files.example/feed'")
        expectError(
            head + "feeds: [https://a.example/rss, https://b.example/rss, https://a.example/rss]\n",
            at: "jobs/test.yaml:3:55", field: "feeds[3]",
            mentions: "'https://a.example/rss' is already feeds[1]")
        expectError(
            head + "feeds: []\n", at: "jobs/test.yaml:3:8", field: "feeds", mentions: "at least one feed URL")
        expectError(
            head + "feeds: {url: https://a.example}\n", at: "jobs/test.yaml:3:8", field: "feeds",
            mentions: "a list")
        expectError(
            head + "items: [a]\nfeds: [https://a.example]\n", at: "jobs/test.yaml:4:1", field: "feds",
            mentions: "did you mean 'feeds'?")
    }

    @Test func maxNewIsAPositiveNumberAndNeedsFeeds() {
        let head = "kind: research\ntemplate: \"{{item}}\"\n"
        let feeds = "feeds: [https://example.org/feed]\n"
        expectError(
            head + feeds + "max_new: 0\n", at: "jobs/test.yaml:4:10", field: "max_new",
            mentions: "expected a whole number from 1 to 10_000, got '0'")
        expectError(
            head + feeds + "max_new: lots\n", at: "jobs/test.yaml:4:10", field: "max_new",
            mentions: "got 'lots'")
        expectError(
            head + "items: [a]\nmax_new: 3\n", at: "jobs/test.yaml:4:1", field: "max_new",
            mentions: "only a job with 'feeds' takes new entries")
    }

    @Test func aFeedJobsTemplateUsesOnlyWhatAnEntrySupplies() {
        expectError(
            "kind: research\ntemplate: \"{{topic}}\"\nfeeds: [https://example.org/feed]\n",
            at: "jobs/test.yaml:2:11", field: "template",
            mentions: "variable 'topic' is not supplied by feed entries (which have: id, item)")
        // Inline items that have `topic` do not help: every feed entry must fill the template too.
        expectError(
            "kind: research\ntemplate: \"{{topic}}\"\nitems: [{topic: x}]\nfeeds: [https://example.org/feed]\n",
            at: "jobs/test.yaml:2:11", field: "template", mentions: "not supplied by feed entries")
    }

    @Test func aJobWithoutFeedsStillNeedsItems() {
        expectError(
            "kind: research\ntemplate: \"{{item}}\"\n", at: "jobs/test.yaml:1:1", field: "items",
            mentions: "'feeds' on a research job")
    }

    /// Runs hash their spec's canonical JSON: a spec without feeds must encode as it did before
    /// feeds existed, and one stored then must still decode.
    @Test func aSpecWithoutFeedsEncodesAsBefore() throws {
        let spec = try parse("kind: research\ntemplate: \"{{item}}\"\nitems: [a]\n")
        let text = CanonicalJSON.text(spec)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let before: Set<String> = [
            "acceptsSubmissions", "batching", "budget", "cacheTTL", "checkpointMaxAge", "chunking",
            "constraints", "downgradeOnBattery", "inputs", "items", "kind", "maxAttempts", "maxTokens",
            "name",
            "output", "promptCache", "sourcePath", "sources", "template", "tier",
        ]
        #expect(Set(object.keys) == before)
        let decoded = try JSONDecoder().decode(JobSpec.self, from: Data(text.utf8))
        #expect(decoded == spec)
        #expect(CanonicalJSON.text(decoded) == text)

        var withFeeds = spec
        withFeeds.feeds = ["https://example.org/feed"]
        withFeeds.maxNew = 3
        let feedText = CanonicalJSON.text(withFeeds)
        #expect(try JSONDecoder().decode(JobSpec.self, from: Data(feedText.utf8)) == withFeeds)
        #expect(JobSpec.differingFields(spec.sharedText, withFeeds.sharedText) == ["feeds", "max_new"])
        withFeeds.feeds = []
        withFeeds.maxNew = nil
        #expect(CanonicalJSON.text(withFeeds) == text, "emptied feeds encode as none")
    }
}
