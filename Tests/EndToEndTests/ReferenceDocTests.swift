import Foundation
import OffpeakTestSupport
import Testing

/// docs/reference.md is what swift-argument-parser's `generate-docc-reference` makes of the built
/// offpeak's parser (issue 47, item 3): the same source as the man page and the completions, so a
/// command, an option or a help text changed without `make reference` fails here.
@Suite(.ownThreads) struct ReferenceDocTests {
    @Test func theCommittedReferenceIsTheParsersOwn() throws {
        let tool = BuiltBinaries.directory.appendingPathComponent("generate-docc-reference")
        try #require(
            FileManager.default.isExecutableFile(atPath: tool.path),
            "build it first: swift build --product generate-docc-reference (make build does)")
        let generated = try CommandResult.run(
            tool, [BuiltBinaries.offpeak.path, "--output-directory", "-", "--style", "github"],
            environment: [:])
        #expect(generated.status == 0, "\(generated.stderr)")
        let committed = try String(
            contentsOf: BuiltBinaries.packageRoot.appendingPathComponent("docs/reference.md"), encoding: .utf8
        )
        // The first line that differs, not two whole files.
        let (made, kept) = (
            generated.stdout.components(separatedBy: "\n"), committed.components(separatedBy: "\n")
        )
        let stale = (0..<max(made.count, kept.count)).first {
            (made.indices.contains($0) ? made[$0] : nil) != (kept.indices.contains($0) ? kept[$0] : nil)
        }
        #expect(
            stale == nil,
            "docs/reference.md is stale at line \((stale ?? 0) + 1): it says \(stale.map { kept.indices.contains($0) ? "'\(kept[$0])'" : "nothing" } ?? ""), the parser \(stale.map { made.indices.contains($0) ? "'\(made[$0])'" : "nothing" } ?? ""); run `make reference` and commit it"
        )
        // Every provider the registry holds is named where `--provider` is.
        for provider in ["anthropic", "openai", "sim", "gemini"] {
            #expect(committed.contains(provider), "\(provider)")
        }
    }
}
