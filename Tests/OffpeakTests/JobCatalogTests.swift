import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// The one spec loader behind `jobs ls`, `jobs validate` and `tick`.
@Suite(.ownThreads) struct JobCatalogTests {
    static func workspace() throws -> TemporaryWorkspace {
        let workspace = try TemporaryWorkspace()
        try workspace.write("jobs/a.yaml", "kind: prompt\ntemplate: \"{{item}}\"\nitems: [x, y]\n")
        try workspace.write(
            "jobs/b.yaml", "kind: prompt\ntemplate: \"{{item}}\"\nmax_tokenz: 3\nitems: [x]\n")
        try workspace.write(
            "jobs/c.yml",
            "name: see\nkind: prompt\ntemplate: \"{{item}}\"\nschedule: \"@daily\"\nitems: [x]\n")
        try workspace.write("jobs/notes.txt", "not a spec")
        return workspace
    }

    @Test func everySpecIsLoadedOrSaysWhyNot() throws {
        let workspace = try Self.workspace()
        let catalog = try JobCatalog.load(workspace: workspace.root)
        #expect(catalog.entries.map(\.file) == ["jobs/a.yaml", "jobs/b.yaml", "jobs/c.yml"])
        #expect(catalog.entries.map(\.name) == ["a", "b", "see"])
        #expect(catalog.specs.keys.sorted() == ["a", "see"])
        #expect(
            catalog.errors.map(\.description) == [
                "jobs/b.yaml:3:1: max_tokenz: unknown field; did you mean 'max_tokens'? (allowed: "
                    + JobSpecParser.fields.joined(separator: ", ") + ")"
            ])
        #expect(
            catalog.entries.compactMap(\.validatedLine) == [
                "ok  jobs/a.yaml (a: 2 items)", "ok  jobs/c.yml (see: 1 item)",
            ])
    }

    @Test func namedJobsAreFoundByNameOrPathAndAMissingOneIsAUsageError() throws {
        let workspace = try Self.workspace()
        let named = try JobCatalog.load(workspace: workspace.root, named: ["c", "jobs/a.yaml"])
        #expect(named.entries.map(\.name) == ["see", "a"])
        do {
            _ = try JobCatalog.load(workspace: workspace.root, named: ["nope"])
            Issue.record("a missing job was found")
        } catch {
            #expect(error.status == .usage)
        }
    }

    @Test func theListShowsInvalidSpecsAsSuch() throws {
        let workspace = try Self.workspace()
        let report = JobListReport(try JobCatalog.load(workspace: workspace.root))
        #expect(
            report.text == """
                JOB  KIND     ITEMS  SCHEDULE  FILE
                a    prompt   2      -         jobs/a.yaml
                b    invalid  -      -         jobs/b.yaml
                see  prompt   1      @daily    jobs/c.yml

                """)
    }
}
