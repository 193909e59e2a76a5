import Foundation
import Synchronization

/// The provider calls a pass has in flight, handed back in the order they finish to the one thread
/// that commits them.
///
/// Each call waits on a thread of its own: the transfer itself runs on the HTTP client's single
/// libcurl multi loop (`TransferLoop`), so a waiting thread costs a stack and nothing else. Threads,
/// not tasks: a provider call blocks until its answer, and blocking Swift's cooperative pool (two
/// threads on a two-core machine) would cap the calls in flight at two and starve every other task.
/// Every thread started is waited for (`waitForAll`), so none outlives the pass.
final class CallsInFlight: Sendable {
    /// A call that came back, with what the pass needs to commit it.
    struct Finished: Sendable {
        var call: PlannedCall
        var ticket: CallLimiter.CallTicket
        var reply: CallReply
        var started: Date
        var ended: Date
        /// The call's budget reservation, released when it is committed.
        var reservation: Int64?
        /// The lane it went in (`live` or `flex`): what it is billed.
        var lane: CallLane = .live
    }

    /// What a call may cost at worst: the run's budgets count it while it is in flight.
    struct Worst: Sendable {
        var inputTokens: Int
        var outputTokens: Int
        var dollars: Double
    }

    private struct State {
        var finished: [Finished] = []
        /// Every call sent and not yet handed back, finished or not.
        var inFlight: [Int: Worst] = [:]
    }

    private let state = Mutex(State())
    /// Signalled once per finished call.
    private let arrivals = DispatchSemaphore(value: 0)

    /// Calls sent and not yet handed back.
    var count: Int { state.withLock { $0.inFlight.count } }

    /// The budgets' view of the calls in flight: each counts as a call at its worst case until it is
    /// handed back to be committed (a call that came back but waits in `finished` is not in the
    /// store's spend yet, so it must still count here).
    var worst: Spend {
        state.withLock { state in
            var spend = Spend()
            for call in state.inFlight.values {
                spend.calls += 1
                spend.inputTokens += call.inputTokens
                spend.outputTokens += call.outputTokens
                spend.dollars += call.dollars
            }
            return spend
        }
    }

    /// Sends `call` on a thread of its own.
    /// - Parameters:
    ///   - lane: the lane `send` sends it in.
    ///   - send: the blocking provider call.
    func start(
        _ call: PlannedCall, ticket: CallLimiter.CallTicket, worst: Worst, reservation: Int64? = nil,
        lane: CallLane = .live, send: @escaping @Sendable (CompletionRequest) -> CallReply
    ) {
        state.withLock { $0.inFlight[ticket.number] = worst }
        Thread.detachNewThread { [self] in
            let started = Date()
            let reply = send(call.request)
            let done = Finished(
                call: call, ticket: ticket, reply: reply, started: started, ended: Date(),
                reservation: reservation, lane: lane)
            state.withLock { $0.finished.append(done) }
            arrivals.signal()
        }
    }

    /// The next call to come back: waits for one when `timeout` allows (`nil`: as long as one is in
    /// flight); `nil` when none is in flight or the time ran out.
    func next(timeout: TimeInterval? = nil) -> Finished? {
        guard count > 0 else { return nil }
        let result =
            timeout.map { arrivals.wait(timeout: .now() + max(0, $0)) }
            ?? {
                arrivals.wait()
                return .success
            }()
        guard result == .success else { return nil }
        return state.withLock { state in
            guard !state.finished.isEmpty else { return nil }
            let done = state.finished.removeFirst()
            state.inFlight[done.ticket.number] = nil
            return done
        }
    }

    /// Hands back every call still out, as each finishes.
    func waitForAll(_ body: (Finished) throws(OffpeakError) -> Void) throws(OffpeakError) {
        while let done = next() { try body(done) }
    }
}
