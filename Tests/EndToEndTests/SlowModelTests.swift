import Foundation
import OffpeakTestSupport
import Testing

/// A slow model's long answer through the built `offpeak` (issue 13, item 3): once the model's
/// speed is measured, a call whose answer takes longer than `http.timeout` gets the time it needs,
/// instead of being abandoned mid-answer and asked again.
@Suite(.ownThreads, .serialized) struct SlowModelTests {
    /// The sim writes 25 ms a token; `http.timeout` is 1 s. A short call measures the model, then a
    /// call answering about 80 tokens (some 2 s) is waited for: one call, not one and its retry.
    @Test(.timeLimit(.minutes(2))) func aLongAnswerIsWaitedForNotAskedAgain() throws {
        let sim = try SimProcess(arguments: ["--ms-per-output-token", "25", "--answer-tokens", "200"])
        let workspace = try TemporaryWorkspace()
        try workspace.write(
            "offpeak.yaml",
            "provider: sim\nbase_url: \(sim.url)\nhttp: {connect_timeout: 1s, timeout: 1s, max_retries: 1}\n")
        try workspace.write(
            "jobs/short.yaml",
            "kind: prompt\nitems: [Hi.]\ntemplate: \"{{item}}\"\nmax_tokens: 20\nbatching: off\n")
        let sentence = String(repeating: "word ", count: 80) + "end."
        try workspace.write(
            "jobs/long.yaml",
            "kind: prompt\nitems: [\"\(sentence)\"]\ntemplate: \"{{item}}\"\nmax_tokens: 200\nbatching: off\n"
        )

        let short = try workspace.offpeak(["run", "short"])
        #expect(short.status == 0, "\(short.stderr)")
        #expect(try TickTests.calls(sim) == 1)

        let long = try workspace.offpeak(["run", "long", "--verbose"])
        #expect(long.status == 0, "\(long.stdout) \(long.stderr)")
        #expect(
            try TickTests.calls(sim) == 2, "the long answer was waited for, not abandoned and asked again")
        #expect(TickTests.answers(workspace, job: "long").values.map { $0 } == ["Answer: \(sentence)\n"])
        let raised = long.stderr.split(separator: "\n").compactMap { line in
            line.range(of: "call to ").map { String(line[$0.lowerBound...]) }
        }
        #expect(raised.count == 1, "\(long.stderr)")
        let why = try #require(raised.first)
        let pattern = try Regex(
            #"call to claude-sonnet-4-5 may take (\d+) s, over http\.timeout's 1 s: at its measured "#
                + #"([\d.]+) ms per token, it sends 101 tokens and may write up to 200, ([\d.]+) s at most, "#
                + #"x1\.5 plus 1 s to connect"#)
        let match = try #require(why.wholeMatch(of: pattern), "\(why)")
        let seconds = try #require(match[1].substring.flatMap { Double($0) })
        let worst = try #require(match[3].substring.flatMap { Double($0) })
        #expect(seconds > 2, "longer than the answer takes")
        #expect(abs(seconds - (worst * 1.5 + 1)) <= 1, "\(why)")
    }
}
