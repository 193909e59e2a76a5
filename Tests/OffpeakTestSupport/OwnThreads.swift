import Foundation
import Testing

/// Runs a suite's tests on threads of their own instead of Swift Testing's cooperative pool.
///
/// Most tests here wait: for a built binary to finish, a sim to start, a window to pass. They wait
/// synchronously, which holds the thread they run on, and the cooperative pool has one thread per
/// core: on a 2-core machine two tests ran at a time and the rest queued, with the processor 40 %
/// idle. Queued time also counted against a test's `.timeLimit`, so a quick test could fail its limit
/// without having started. How many tests run at once is `make test`'s choice
/// (`--experimental-maximum-parallelization-width`), no longer the pool's.
public struct OwnThreads: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard testCase != nil else { return try await function() }
        try await withTaskExecutorPreference(TestThreads.shared) { try await function() }
    }
}

extension Trait where Self == OwnThreads {
    /// The suite's tests run on threads of their own, so a test that waits holds no pool thread.
    public static var ownThreads: Self { OwnThreads() }
}

/// A task executor that runs each job on an idle thread of its own, starting a new one when none is
/// idle. A job may block as long as it likes: every other job still finds a thread, so a test that
/// waits for work of its own on this executor cannot deadlock it. Threads are kept for the next jobs;
/// there are at most as many as jobs ever ran at once.
public final class TestThreads: TaskExecutor, @unchecked Sendable {
    public static let shared = TestThreads()

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    /// Threads waiting for a job. Each queued job has one of them, or a thread being started for it.
    private var idle = 0

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        let startThread = jobs.count > idle
        if !startThread { condition.signal() }
        condition.unlock()
        if startThread { Thread.detachNewThread { self.work() } }
    }

    private func work() {
        let executor = asUnownedTaskExecutor()
        condition.lock()
        while true {
            idle += 1
            while jobs.isEmpty { condition.wait() }
            idle -= 1
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: executor)
            condition.lock()
        }
    }
}
