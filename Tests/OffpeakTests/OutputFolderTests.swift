import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// `summarize --out` and a spec's `output` follow one rule: a folder inside the workspace, never
/// its root. `--out ../x`, `--out /abs` and `--out ""` used to write outside it or into its root.
@Suite(.ownThreads) struct OutputFolderTests {
    static let workspace = Workspace(root: FileManager.default.temporaryDirectory)

    @Test(arguments: [
        ("../x", "expected a folder inside the workspace, got '../x', which leaves it"),
        ("out/../../x", "expected a folder inside the workspace, got 'out/../../x', which leaves it"),
        ("/abs", "expected a folder relative to the workspace, got the absolute path '/abs'"),
        ("~/out", "expected a folder relative to the workspace, got the absolute path '~/out'"),
        ("", "expected a folder inside the workspace, got ''"),
        (".", "expected a folder inside the workspace, got '.'"),
        ("./", "expected a folder inside the workspace, got './'"),
    ])
    func summarizeOutIsAUsageErrorWhereASpecOutputIsRefused(folder: String, problem: String) throws {
        let out = #expect(throws: OffpeakError.self) {
            try JobSpec.summarize(
                files: ["a.md"], tier: .fast, output: folder, maxTokens: 100, workspace: Self.workspace)
        }
        #expect(out?.status == .usage)
        #expect(out?.description == "--out: \(problem)")

        let yaml = "kind: prompt\ntemplate: x\nitems: [a]\noutput: \"\(folder)\"\n"
        let spec = #expect(throws: OffpeakError.self) {
            try JobSpecParser.parse(yaml: yaml, path: "jobs/t.yaml", workspace: Self.workspace.root)
        }
        #expect(spec?.description == "jobs/t.yaml:4:9: output: \(problem)")
    }

    @Test(arguments: [("out/notes/", "out/notes"), ("./results", "./results"), ("notes", "notes")])
    func foldersInsideTheWorkspaceAreKeptForBoth(out: String, kept: String) throws {
        let folder = try TemporaryWorkspace()
        try folder.write("a.md", "text\n")
        let workspace = Workspace(root: folder.root)
        let summarize = try JobSpec.summarize(
            files: ["a.md"], tier: .fast, output: out, maxTokens: 100, workspace: workspace)
        #expect(summarize.output == kept)
        let yaml = "kind: prompt\ntemplate: x\nitems: [a]\noutput: \(out)\n"
        #expect(
            try JobSpecParser.parse(yaml: yaml, path: "jobs/t.yaml", workspace: workspace.root).output == kept
        )
        #expect(
            try JobSpec.summarize(
                files: ["a.md"], tier: .fast, output: nil, maxTokens: 100, workspace: workspace
            ).output == "out/summarize")
    }
}
