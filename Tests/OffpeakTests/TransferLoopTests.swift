import Foundation
import OffpeakTestSupport
import Synchronization
import Testing

@testable import Offpeak

/// Many exchanges in flight on one `HTTPClient` (its `TransferLoop`), over loopback to the sim
/// and to `LocalHTTPServer`, which counts the requests it is holding at once.
///
/// The time limit catches a hang, not slowness: on a 2-core machine the whole suite's synchronous
/// tests hold the cooperative pool's two threads while they wait for their processes, and an
/// `async` test here resumes only between them (a run of the PostgreSQL pass took one past a
/// 1-minute limit, its exchanges all answered).
@Suite(.ownThreads, .timeLimit(.minutes(10))) struct TransferLoopTests {
    typealias Outcome = Result<HTTPResponse, TransportError>

    /// One `async` send, its failure kept as a value so many can be gathered.
    static func outcome(
        _ client: HTTPClient, _ request: HTTPRequest, cancellation: CancellationFlag? = nil
    ) async -> Outcome {
        do { return .success(try await client.send(request, cancellation: cancellation)) } catch {
            return .failure(error)
        }
    }

    /// Sends every request at once and returns each outcome with the instant it came back, in
    /// the order of `requests`.
    static func sendAll(_ client: HTTPClient, _ requests: [HTTPRequest]) async -> [(
        Outcome, ContinuousClock.Instant
    )] {
        await withTaskGroup(of: (Int, Outcome, ContinuousClock.Instant).self) { group in
            for (index, request) in requests.enumerated() {
                group.addTask { (index, await outcome(client, request), .now) }
            }
            var results = [(Outcome, ContinuousClock.Instant)?](repeating: nil, count: requests.count)
            for await (index, outcome, instant) in group { results[index] = (outcome, instant) }
            return results.compactMap { $0 }
        }
    }

    /// The blocking `send`, which an `async` caller only reaches from a synchronous function.
    static func blockingSend(_ client: HTTPClient, _ request: HTTPRequest) throws -> HTTPResponse {
        try client.send(request)
    }

    static func text(_ outcome: Outcome) -> String? {
        guard case .success(let response) = outcome, response.status == 200 else { return nil }
        return String(decoding: response.body, as: UTF8.self)
    }

    /// Waits until the server holds `count` requests, asking on a client of its own.
    static func waitUntilServerHolds(_ count: Int, _ server: LocalHTTPServer) async throws {
        let deadline = Date() + 45
        while Date() < deadline {
            if try await held(by: server) >= count { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("the server never held \(count) requests at once")
    }

    /// How many requests the server is holding now.
    static func held(by server: LocalHTTPServer) async throws -> Int {
        let now = try await HTTPClient().send(HTTPRequest(url: server.url("/inflight")))
        return Int(String(decoding: now.body, as: UTF8.self)) ?? -1
    }

    /// Lets every request held at the server's `/gate` go.
    static func openGate(_ server: LocalHTTPServer) async throws {
        _ = try await HTTPClient().send(HTTPRequest(url: server.url("/open")))
    }

    /// 16 calls to a sim that takes 300 ms an answer, timed where the answers arrive (on the
    /// loop's thread, so a busy test runner cannot skew it). With at most two in flight at a time
    /// (one blocking call per thread of a two-core cooperative pool) the sim holds every call for
    /// 300 ms, so the 16 take at least 8 × 300 ms from the first send and the answers spread over
    /// at least 7 × 300 ms. Spread less than that, more than two were in flight at once.
    @Test func sixteenCallsToASlowSimAreInFlightTogether() throws {
        let sim = try SimProcess(arguments: ["--latency-ms", "300"])
        let client = HTTPClient()
        let body = #"{"model":"m","max_tokens":20,"messages":[{"role":"user","content":"Hello there."}]}"#
        let call = HTTPRequest(
            method: "POST", url: sim.url + "/v1/messages",
            headers: [(name: "content-type", value: "application/json"), (name: "x-api-key", value: "k")],
            body: Array(body.utf8))
        let answers = Collected<(status: Int?, at: ContinuousClock.Instant)>()
        let done = DispatchGroup()
        for _ in 0..<16 {
            done.enter()
            client.loop.submit(call, maxBodyBytes: client.maxResponseBytes, cancellations: []) { result in
                answers.add(((try? result.get())?.status, .now))
                done.leave()
            }
        }
        done.wait()
        #expect(answers.all.map(\.status) == Array(repeating: 200, count: 16))
        let instants = answers.all.map(\.at)
        let spread = try #require(instants.max()) - (try #require(instants.min()))
        #expect(spread < .milliseconds(7 * 300))
        #expect(try sim.stats()["ok_calls"] as? Int == 16)
    }

    /// The server releases no request before 16 are held at once (or 20 s pass): every answer
    /// says 16 only if all were in flight together.
    @Test func sixteenExchangesAreHeldAtOnce() async throws {
        let server = try LocalHTTPServer()
        let request = HTTPRequest(url: server.url("/together/16"), timeout: 30)
        let results = await Self.sendAll(HTTPClient(), Array(repeating: request, count: 16))
        #expect(results.map { Self.text($0.0) } == Array(repeating: "16", count: 16))
    }

    /// Blocking sends from four threads share the same loop, and overlap just the same.
    @Test func blockingSendsFromManyThreadsOverlap() throws {
        let server = try LocalHTTPServer()
        let client = HTTPClient()
        let answers = Collected<String?>()
        let url = server.url("/together/4")
        let done = DispatchGroup()
        // Threads of their own: `concurrentPerform` would run only one per core.
        for _ in 0..<4 {
            done.enter()
            Thread {
                let answer = try? client.send(HTTPRequest(url: url, timeout: 30))
                answers.add(answer.map { String(decoding: $0.body, as: UTF8.self) })
                done.leave()
            }.start()
        }
        done.wait()
        #expect(answers.all == ["4", "4", "4", "4"])
    }

    /// Raising one exchange's flag ends it at once; the others, held by the server with it, go
    /// on, and answer once the server lets them.
    @Test func cancellingOneLeavesTheOthersRunning() async throws {
        let server = try LocalHTTPServer()
        let client = HTTPClient()
        let flag = CancellationFlag()
        let gate = HTTPRequest(url: server.url("/gate"), timeout: 90)
        async let cancelled = Self.outcome(client, gate, cancellation: flag)
        let others = Task { await Self.sendAll(client, Array(repeating: gate, count: 3)) }
        try await Self.waitUntilServerHolds(4, server)
        flag.cancel()
        #expect(await cancelled == .failure(.cancelled))
        try await Self.openGate(server)
        #expect(await others.value.allSatisfy { Self.text($0.0) != nil })
    }

    /// Cancelling the task that awaits an exchange ends that exchange, and only that one.
    @Test func cancellingATaskEndsItsExchange() async throws {
        let server = try LocalHTTPServer()
        let client = HTTPClient()
        let gate = HTTPRequest(url: server.url("/gate"), timeout: 90)
        let waiting = Task { await Self.outcome(client, gate) }
        let other = Task { await Self.outcome(client, gate) }
        try await Self.waitUntilServerHolds(2, server)
        waiting.cancel()
        #expect(await waiting.value == .failure(.cancelled))
        try await Self.openGate(server)
        #expect(Self.text(await other.value) != nil)
    }

    /// One exchange's total timeout ends it alone, while three others are in flight; they answer
    /// once the server lets them.
    @Test func oneTimingOutLeavesTheOthersRunning() async throws {
        let server = try LocalHTTPServer()
        let client = HTTPClient()
        let gate = HTTPRequest(url: server.url("/gate"), timeout: 90)
        let others = Task { await Self.sendAll(client, Array(repeating: gate, count: 3)) }
        try await Self.waitUntilServerHolds(3, server)
        let impatient = HTTPRequest(url: server.url("/gate"), connectTimeout: 2, timeout: 0.5)
        #expect(await Self.outcome(client, impatient) == .failure(.timedOut(0.5)))
        try await Self.openGate(server)
        #expect(await others.value.allSatisfy { Self.text($0.0) != nil })
    }

    /// Four exchanges at once need four connections; the calls after them reuse those, whether
    /// sent with `await` or blocking.
    @Test func laterCallsReuseTheConnectionsOfEarlierOnes() async throws {
        let server = try LocalHTTPServer()
        let client = HTTPClient()
        let gate = HTTPRequest(url: server.url("/gate"), timeout: 90)
        let burst = Task { await Self.sendAll(client, Array(repeating: gate, count: 4)) }
        try await Self.waitUntilServerHolds(4, server)
        try await Self.openGate(server)
        let ports = Set(await burst.value.compactMap { Self.text($0.0) })
        #expect(ports.count == 4)
        for _ in 0..<4 {
            let port = Self.text(await Self.outcome(client, HTTPRequest(url: server.url("/peer"))))
            #expect(port.map(ports.contains) == true)
        }
        let blocking = try Self.blockingSend(client, HTTPRequest(url: server.url("/peer")))
        #expect(ports.contains(String(decoding: blocking.body, as: UTF8.self)))
    }

    /// The client's cap and a request's own cap hold for each exchange of a concurrent set.
    @Test func sizeCapsHoldPerExchange() async throws {
        let server = try LocalHTTPServer()
        let small = HTTPClient(maxResponseBytes: 8)
        let results = await Self.sendAll(
            small, [HTTPRequest(url: server.url("/hello.txt")), HTTPRequest(url: server.url("/peer"))])
        #expect(results[0].0 == .failure(.responseTooLarge(limit: 8)))
        #expect(Self.text(results[1].0) != nil)
        let capped = await Self.outcome(
            HTTPClient(), HTTPRequest(url: server.url("/hello.txt"), maxBodyBytes: 4))
        #expect(capped == .failure(.responseTooLarge(limit: 4)))
    }

    /// `shutdown` ends every exchange in flight with `.cancelled` (the server would hold them for a
    /// minute), and every later send, blocking or not, fails the same way.
    @Test func shutdownEndsEveryExchangeInFlight() async throws {
        let server = try LocalHTTPServer()
        let client = HTTPClient()
        let gate = HTTPRequest(url: server.url("/gate"), timeout: 90)
        let inFlight = Task { await Self.sendAll(client, Array(repeating: gate, count: 4)) }
        try await Self.waitUntilServerHolds(4, server)
        client.shutdown()
        #expect(await inFlight.value.map(\.0) == Array(repeating: .failure(.cancelled), count: 4))
        #expect(
            await Self.outcome(client, HTTPRequest(url: server.url("/hello.txt"))) == .failure(.cancelled))
        #expect(throws: TransportError.cancelled) {
            try Self.blockingSend(client, HTTPRequest(url: server.url("/hello.txt")))
        }
    }
}

/// What several threads hand back, collected under a lock.
final class Collected<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])

    func add(_ value: Value) {
        values.withLock { $0.append(value) }
    }

    var all: [Value] {
        values.withLock { $0 }
    }
}
