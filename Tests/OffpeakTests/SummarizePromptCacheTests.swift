import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// `offpeak summarize --no-prompt-cache` turns the job's prompt cache off, as a spec's
/// `prompt_cache: false` does, without changing which answers it may reuse.
@Suite(.ownThreads) struct SummarizePromptCacheTests {
    static func spec(promptCache: Bool?) throws -> (JobSpec, TemporaryWorkspace) {
        let folder = try TemporaryWorkspace()
        try folder.write("a.md", "A short note about tides.\n")
        let workspace = Workspace(root: folder.root)
        let spec =
            try promptCache.map {
                try JobSpec.summarize(
                    files: ["a.md"], tier: .fast, output: nil, maxTokens: 100, promptCache: $0,
                    workspace: workspace)
            }
            ?? JobSpec.summarize(
                files: ["a.md"], tier: .fast, output: nil, maxTokens: 100, workspace: workspace)
        return (spec, folder)
    }

    @Test func noPromptCacheAsksForNoCacheMarker() throws {
        let planner = RequestPlanner(provider: .anthropic, model: "claude-sonnet-4-5")
        let (off, _) = try Self.spec(promptCache: false)
        let (on, _) = try Self.spec(promptCache: nil)
        #expect(!off.promptCache && on.promptCache)
        let offRequest = try #require(planner.plan(off).first)
        let onRequest = try #require(planner.plan(on).first)
        #expect(!offRequest.request.cacheSystemPrompt)
        #expect(onRequest.request.cacheSystemPrompt)
        #expect(offRequest.cacheKey == onRequest.cacheKey, "the same answer either way")
    }
}
