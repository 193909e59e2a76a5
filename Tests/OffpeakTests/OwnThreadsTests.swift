import Foundation
import OffpeakTestSupport
import Testing

/// `.ownThreads`, which lets the suites that wait run side by side on a 2-core machine.
@Suite(.ownThreads) struct OwnThreadsTests {
    /// Eight tasks that each block until all eight have started: on the cooperative pool (a thread
    /// per core) they would wait for each other for ever; on `TestThreads` each has a thread.
    @Test func tasksThatBlockUntilAllHaveStartedAllFinish() async {
        let count = 8
        let arrived = DispatchSemaphore(value: 0)
        let allArrived = DispatchSemaphore(value: 0)
        let met = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<count {
                group.addTask(executorPreference: TestThreads.shared) {
                    arrived.signal()
                    return allArrived.wait(timeout: .now() + 30) == .success
                }
            }
            group.addTask {
                for _ in 0..<count { arrived.wait() }
                for _ in 0..<count { allArrived.signal() }
                return true
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(met == Array(repeating: true, count: count + 1))
    }

    /// Every suite of a test file that uses the test support (it starts binaries, sims, clusters
    /// and waits for them) runs on threads of its own.
    @Test func everySuiteThatUsesTheTestSupportHasItsOwnThreads() throws {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        var missing: [String] = []
        for target in ["OffpeakTests", "EndToEndTests"] {
            let folder = tests.appendingPathComponent(target)
            for file in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
            where file.hasSuffix(".swift") {
                let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                guard text.contains("import OffpeakTestSupport") else { continue }
                let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
                for (index, line) in lines.enumerated()
                where line.contains("struct ") && line.hasSuffix("Tests {") && !line.hasPrefix(" ") {
                    let attributes =
                        index > 0 && lines[index - 1].hasPrefix("@") ? lines[index - 1] + line : line
                    if !attributes.contains("@Suite(.ownThreads") {
                        missing.append("\(target)/\(file): \(line)")
                    }
                }
            }
        }
        #expect(missing == [])
    }
}
