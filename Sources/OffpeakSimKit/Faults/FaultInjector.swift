import Synchronization

/// Decides which fault, if any, hits each API call.
///
/// Three sources, in this order: the call's own `x-sim-fault` header, the queue filled by
/// `POST /sim/faults` (one fault per call, first in first out), and the random rates of
/// `--fault-rate`. The random draw is taken on every call, whether or not a header or the queue
/// decided it, so with a fixed `--seed` the n-th call always sees the same draw.
public final class FaultInjector: Sendable {
    private struct State {
        var queue: [SimFault] = []
        var random: SplitMix64
    }

    private let rates: FaultRates
    private let seed: UInt64
    private let state: Mutex<State>

    public init(rates: FaultRates = .none, seed: UInt64 = 0) {
        self.rates = rates
        self.seed = seed
        self.state = Mutex(State(random: SplitMix64(seed: seed)))
    }

    /// The fault for the next API call.
    /// - Parameter header: the value of the call's `x-sim-fault` header, if it has one.
    /// - Throws: `SimConfigError.unknownFault` when the header names no fault.
    public func faultForNextCall(header: String?) throws -> SimFault? {
        let requested = try header.map { try SimFault(name: $0) }
        return state.withLock { state in
            let draw = rates.entries.isEmpty ? nil : rates.fault(forDraw: state.random.nextUnitDouble())
            if let requested { return requested }
            if !state.queue.isEmpty { return state.queue.removeFirst() }
            return draw
        }
    }

    /// The fault for a batch create call: its `x-sim-fault` header or the next queued fault. No
    /// random draw is taken, so batch calls leave the live calls' fault sequence as it was.
    public func faultForBatchCreate(header: String?) throws -> SimFault? {
        let requested = try header.map { try SimFault(name: $0) }
        return state.withLock { state in
            if let requested { return requested }
            return state.queue.isEmpty ? nil : state.queue.removeFirst()
        }
    }

    /// Queues faults for the next API calls, one each, after any already queued.
    public func enqueue(_ faults: [SimFault]) {
        state.withLock { $0.queue += faults }
    }

    /// The faults still waiting for a call, next first.
    public var pending: [SimFault] {
        state.withLock { $0.queue }
    }

    public func clearQueue() {
        state.withLock { $0.queue.removeAll() }
    }

    /// Clears the queue and restarts the random sequence from the seed, so a reset sim replays
    /// the same faults.
    public func reset() {
        state.withLock { state in
            state.queue.removeAll()
            state.random = SplitMix64(seed: seed)
        }
    }
}
