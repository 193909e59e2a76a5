import Foundation
import Testing

@testable import Offpeak

/// Alias bombs: anchors nested ten wide took seconds to validate at depth 7 and minutes at depth 9
/// (Yams hashes every mapping key in full, and an alias key stands for the whole nested tree).
/// Each must now be refused within a second, at the alias that crosses the limit; aliases used as
/// values in the ordinary way keep working.
struct YAMLAliasTests {
    static let spec = "kind: prompt\ntemplate: \"{{item}}\"\n"

    /// `items` whose entries are anchors `&a0` ... `&a<depth>`, each a list of ten aliases of the one
    /// before, then `extra` lines.
    static func nestedAnchors(depth: Int, extra: String = "") -> String {
        var lines = ["items:", "  - &a0 [x, x, x, x, x, x, x, x, x, x]"]
        for level in 1...depth {
            let previous = Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ")
            lines.append("  - &a\(level) [\(previous)]")
        }
        return lines.joined(separator: "\n") + "\n" + extra
    }

    /// The refusal of `yaml` as a job spec, timed.
    static func refusal(_ yaml: String) -> (error: OffpeakError?, elapsed: Duration) {
        let clock = ContinuousClock()
        var refusal: OffpeakError?
        let elapsed = clock.measure {
            do throws(OffpeakError) {
                _ = try JobSpecParser.parse(
                    yaml: yaml, path: "jobs/bomb.yaml", workspace: URL(fileURLWithPath: "/"))
            } catch {
                refusal = error
            }
        }
        return (refusal, elapsed)
    }

    /// Where the nested anchors stop: `&a1` and `&a2` alias 10 x 11 and 10 x 111 values, and the
    /// eighth alias of `&a2` (1111 values) in `&a3` brings the total past 10_000.
    static let stop =
        "jobs/bomb.yaml:7:45: items[4][8]: too many aliases: '*a2' stands for 1111 values; "
        + "aliases may stand for at most 10_000 in one file"

    @Test(.timeLimit(.minutes(1)))
    func aDepthNineBombUsedAsAKeyIsRefusedWithinASecond() {
        let yaml = Self.spec + Self.nestedAnchors(depth: 9, extra: "  - {? *a8 : x}\n")
        let (error, elapsed) = Self.refusal(yaml)
        #expect(error?.status == .dataError)
        #expect(error?.description == Self.stop)
        #expect(elapsed < .seconds(1))
    }

    @Test(.timeLimit(.minutes(1)))
    func aDepthNineBombUsedAsValuesIsRefusedWithinASecond() {
        let yaml = Self.spec + Self.nestedAnchors(depth: 9, extra: "  - {id: v, item: *a9}\n  - [*a9, *a9]\n")
        let (error, elapsed) = Self.refusal(yaml)
        #expect(error?.description == Self.stop)
        #expect(elapsed < .seconds(1))
    }

    @Test(.timeLimit(.minutes(1)))
    func aBillionLaughsIsRefusedWithinASecond() {
        var lines = ["lol0: &lol0 \"lol\""]
        for level in 1...9 {
            let previous = Array(repeating: "*lol\(level - 1)", count: 10).joined(separator: ",")
            lines.append("lol\(level): &lol\(level) [\(previous)]")
        }
        let yaml = lines.joined(separator: "\n") + "\n"
        let clock = ContinuousClock()
        let start = clock.now
        let error = #expect(throws: OffpeakError.self) {
            try WorkspaceConfigParser.parse(yaml: yaml, path: "offpeak.yaml")
        }
        #expect(clock.now - start < .seconds(1))
        #expect(error?.status == .configuration)
        #expect(
            error?.description
                == "offpeak.yaml:5:56: lol4[8]: too many aliases: '*lol3' stands for 1111 values; "
                + "aliases may stand for at most 10_000 in one file")
    }

    /// A list or mapping is never a field name; refusing it where it is written (not where its
    /// anchor is) also keeps Yams from hashing it.
    @Test func anAliasOfAListAsAKeyIsRefusedWhereTheKeyIsWritten() {
        let yaml = Self.spec + "items:\n  - &l [a, b, c]\n  - {id: x, ? *l : y}\n"
        let (error, _) = Self.refusal(yaml)
        #expect(
            error?.description
                == "jobs/bomb.yaml:5:15: items[2]: expected a field name, got '*l', an alias of a list")
        let nested = Self.refusal(Self.spec + "items:\n  - {? [a, b] : y}\n").error
        #expect(nested?.description == "jobs/bomb.yaml:4:8: items[1]: expected a field name, got a list")
    }

    @Test func aliasesUsedAsValuesKeepWorking() throws {
        let spec = try JobSpecParser.parse(
            yaml: """
                kind: research
                template: "{{item}} ({{topic}})"
                sources: &src [https://example.org/a, https://example.org/b]
                items:
                  - {id: a, item: first, topic: &topic oceans}
                  - {id: b, item: second, topic: *topic, sources: *src}
                  - {id: *topic, item: third, topic: tides}
                """, path: "jobs/aliases.yaml", workspace: URL(fileURLWithPath: "/"))
        #expect(spec.items.map(\.id) == ["a", "b", "oceans"])
        #expect(spec.items[1].variables["topic"] == "oceans")
        #expect(spec.items[1].sources == ["https://example.org/a", "https://example.org/b"])
        let config = try WorkspaceConfigParser.parse(
            yaml: "models:\n  anthropic: &tiers {fast: m-fast, powerful: m-big}\n  sim: *tiers\n",
            path: "offpeak.yaml")
        #expect(config.model(for: .powerful, provider: .sim) == "m-big")
    }

    /// Anchors standing for exactly the limit are fine: the check is a ceiling, not a ban.
    @Test func aliasesUpToTheLimitAreAccepted() throws {
        let hundred = (1...100).map { "v\($0)" }.joined(separator: ", ")
        let uses = Array(repeating: "*h", count: 99).joined(separator: ", ")
        let list = "items:\n  - {id: a, item: x}\n  - &h [\(hundred)]\n  - [\(uses)]\n"
        let (error, _) = Self.refusal(Self.spec + list)
        // 99 aliases of a 101-node list: 9_999 values, under the limit; the reader then refuses
        // the list items for what they are.
        #expect(
            error?.description
                == "jobs/bomb.yaml:5:5: items[2]: expected a string or a mapping of variables, got a list")
    }
}
