import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// The spec each host runs each job with (issue 23, item 7): the `JobSpecStore` role on the pass's
/// engine (`TestStore`), the fields two specs differ in as a spec file names them, and when a host's
/// spec counts against another's (`JobSpecAgreement`).
@Suite(.ownThreads) struct JobSpecAgreementTests {
    static let t0 = RoleFixtures.t0

    static func spec(_ yaml: String, name: String = "digest") throws -> JobSpec {
        try JobSpecParser.parse(
            yaml: yaml, path: "jobs/\(name).yaml", workspace: URL(fileURLWithPath: "/nonexistent"))
    }

    static let base = "kind: prompt\ntemplate: \"Q: {{item}}\"\nitems: [a, b]\n"

    @Test func theRoleKeepsOneRowPerJobAndHostAndReadsTheRecentOnes() throws {
        let workspace = try TemporaryWorkspace()
        let store = try workspace.openStore()
        func record(_ job: String, _ host: String, _ hash: String, at date: Date) -> JobSpecRecord {
            JobSpecRecord(job: job, host: host, specHash: hash, spec: "{\"h\":\"\(hash)\"}", seenAt: date)
        }
        try store.jobSpecs.recordJobSpecs([
            record("digest", "box-a", "1", at: Self.t0), record("digest", "box-b", "2", at: Self.t0 - 7200),
            record("inbox", "box-a", "3", at: Self.t0),
        ])
        try store.jobSpecs.recordJobSpecs([record("digest", "box-a", "4", at: Self.t0 + 1)])
        try store.jobSpecs.recordJobSpecs([])
        let all = try store.jobSpecs.jobSpecs(seenSince: Self.t0 - 86400).sorted {
            ($0.job, $0.host) < ($1.job, $1.host)
        }
        #expect(
            all == [
                record("digest", "box-a", "4", at: Self.t0 + 1),
                record("digest", "box-b", "2", at: Self.t0 - 7200),
                record("inbox", "box-a", "3", at: Self.t0),
            ])
        let recent = try store.jobSpecs.jobSpecs(seenSince: Self.t0 - 3600)
        #expect(Set(recent.map(\.specHash)) == ["4", "3"])
    }

    @Test func theFieldsThatDifferAreNamedAsASpecFileNamesThem() throws {
        let one = try Self.spec(Self.base + "max_tokens: 100\nqueue: true\nconstraints: {power: ac}\n")
        let other = try Self.spec(
            "kind: prompt\ntemplate: \"Q2: {{item}}\"\nitems: [a, b]\nmax_tokens: 120\ncache_ttl: 2h\n"
                + "batching: {max_items: 4}\nconstraints: {power: ac, network: unmetered}\n")
        #expect(
            JobSpec.differingFields(one.sharedText, other.sharedText) == [
                "batching.max_items", "cache_ttl", "constraints.network", "max_tokens", "queue", "template",
            ])
        let off = try Self.spec(Self.base + "batching: off\n")
        #expect(JobSpec.differingFields(try Self.spec(Self.base).sharedText, off.sharedText) == ["batching"])
        // The same content from another file path (another host's workspace) is the same spec.
        var moved = try Self.spec(Self.base)
        moved.sourcePath = "/srv/offpeak/jobs/digest.yaml"
        #expect(moved.sharedText == (try Self.spec(Self.base)).sharedText)
        #expect(JobSpec.differingFields(moved.sharedText, try Self.spec(Self.base).sharedText).isEmpty)
        #expect(JobSpec.differingFields("{}", "not json") == ["spec"])
        // A mapping written the same on both sides is not named (on Linux a decoded mapping is a
        // Swift dictionary, once read as changed whatever it held); one that differs is, by field.
        let audited = try Self.spec(Self.base + "audit: {rate: 0.0001, max_share: 1}\n")
        let otherItems = try Self.spec(
            Self.base.replacingOccurrences(of: "[a, b]", with: "[a, c]")
                + "audit: {rate: 0.0001, max_share: 1}\n")
        #expect(JobSpec.differingFields(audited.sharedText, otherItems.sharedText) == ["items"])
        let stricter = try Self.spec(Self.base + "audit: {rate: 0.0001, max_share: 1, agree: 99%}\n")
        #expect(JobSpec.differingFields(audited.sharedText, stricter.sharedText) == ["audit.agree"])
    }

    @Test func aHostsSpecCountsForAnHourAndIsRecordedOnlyWhenItChangesOrAgesAQuarter() throws {
        let workspace = try TemporaryWorkspace()
        let store = try workspace.openStore()
        let (a, b) = (
            JobSpecAgreement(store: store, host: "box-a"), JobSpecAgreement(store: store, host: "box-b")
        )
        let old = try Self.spec(Self.base)
        let new = try Self.spec(Self.base + "tier: fast\n")
        let other = try Self.spec(Self.base, name: "other")
        #expect(try a.check([old, other], now: Self.t0).isEmpty)
        let found = try b.check([new, other], now: Self.t0 + 60)
        #expect(
            found == [
                "digest": JobSpecAgreement.Disagreement(
                    job: "digest", hosts: ["box-b", "box-a"], fields: ["tier"])
            ])
        #expect(
            found["digest"]?.message
                == "job digest: its spec differs between hosts box-b and box-a (fields: tier); it runs once every "
                + "host that ran or ticked it in the last hour has the same spec")
        #expect(found["digest"]?.error.status == .configuration)
        // box-a's record is fresh and unchanged: a check minutes later writes nothing.
        #expect(try a.check([old], now: Self.t0 + 300)["digest"]?.hosts == ["box-a", "box-b"])
        let seen = try store.jobSpecs.jobSpecs(seenSince: Self.t0 - 1).filter {
            $0.host == "box-a" && $0.job == "digest"
        }
        #expect(seen.map(\.seenAt) == [Self.t0])
        // Past an hour, box-a's old record no longer counts against box-b, which runs.
        #expect(try b.check([new], now: Self.t0 + 3601).isEmpty)
        #expect(throws: Never.self) { try b.require(new, now: Self.t0 + 3602) }
        // A spec made without a file (`offpeak summarize`) is one host's one-off work: not compared.
        var oneOff = old
        oneOff.sourcePath = nil
        #expect(try a.check([oneOff], now: Self.t0 + 3603).isEmpty)
    }

    @Test func aThirdHostNamesEveryHostWhoseSpecDiffers() throws {
        let workspace = try TemporaryWorkspace()
        let store = try workspace.openStore()
        let specs = [
            try Self.spec(Self.base), try Self.spec(Self.base + "tier: fast\n"),
            try Self.spec(Self.base + "max_tokens: 99\n"),
        ]
        _ = try JobSpecAgreement(store: store, host: "c").check([specs[0]], now: Self.t0)
        _ = try JobSpecAgreement(store: store, host: "b").check([specs[1]], now: Self.t0)
        _ = try JobSpecAgreement(store: store, host: "d").check([specs[0]], now: Self.t0)
        do {
            try JobSpecAgreement(store: store, host: "a").require(specs[2], now: Self.t0)
            Issue.record("expected the job to be refused")
        } catch {
            #expect(error.status == .configuration)
            #expect(
                error.description
                    == "job digest: its spec differs between hosts a, b, c and d (fields: max_tokens, tier); it "
                    + "runs once every host that ran or ticked it in the last hour has the same spec")
        }
    }
}
