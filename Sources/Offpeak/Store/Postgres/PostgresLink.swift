import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

/// One connection of a PostgreSQL store's pool (`PostgresStore`), lent to one thread at a time.
///
/// offpeak's store API is synchronous (threads, typed throws), postgres-nio's is asynchronous: each
/// statement is handed to postgres-nio's `EventLoopFuture` API on the process's one event loop
/// group and waited for with `.wait()`. The callers are offpeak's own threads, never an event
/// loop's, so waiting cannot stall the loop it waits on.
///
/// A connection runs its statements one at a time, in the order they were handed to it; statements
/// queued together (`enqueue`) go to it in one event loop task (`flush`).
final class PostgresLink: @unchecked Sendable {
    let url: PostgresURL
    private let connection: PostgresConnection
    private let logger: Logger
    private let closing = CloseWatch()
    /// Guards `sent` and `queued`: the thread the link is lent to, and a `SentRows` read or the
    /// store's `close` from another.
    private let lock = NSLock()
    /// Statements sent inside a transaction whose answers nobody has waited for yet.
    private var sent: [EventLoopFuture<PostgresQueryResult>] = []
    /// Statements waiting to go to the connection together, with the promises of their answers.
    private var queued: [(query: PostgresQuery, answer: EventLoopPromise<PostgresQueryResult>)] = []

    private init(url: PostgresURL, connection: PostgresConnection, logger: Logger) {
        self.url = url
        self.connection = connection
        self.logger = logger
        connection.closeFuture.whenComplete { [closing] _ in closing.closed() }
    }

    /// Closed and waited for: postgres-nio requires a connection closed before it is released, and
    /// the last reference is dropped on offpeak's own threads, never an event loop's.
    deinit { close() }

    /// A new connection with `configuration`, its session's keepalives set (`keepalives`).
    /// - Throws: `PostgresFault`'s errors: 78 for what the user must fix, 75 for a server that is
    ///   down, unreachable or starting.
    static func connect(
        _ url: PostgresURL, configuration: PostgresConnection.Configuration, logger: Logger
    ) throws(OffpeakError) -> PostgresLink {
        let future = PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration,
            id: nextID.wrappingAdd(1, ordering: .relaxed).newValue, logger: logger)
        let link: PostgresLink
        do {
            link = PostgresLink(url: url, connection: try future.wait(), logger: logger)
        } catch {
            throw PostgresFault.error(error, url: url)
        }
        _ = try link.run(keepalives)
        return link
    }

    /// A host killed while cut off from the server never closes its connections: without
    /// keepalives the server would keep their sessions (a tick's locks, a transaction's row locks)
    /// for the system's two hours, and the host's next ticks would skip or wait meanwhile. With
    /// these it ends such a session within about a minute. Set by a statement, not as start-up
    /// parameters, which poolers such as pgbouncer refuse.
    static let keepalives: PostgresQuery = """
        SELECT set_config('tcp_keepalives_idle', '30', false),
            set_config('tcp_keepalives_interval', '10', false),
            set_config('tcp_keepalives_count', '3', false)
        """

    /// Whether the connection has closed, or a statement's failure said it is gone (the server
    /// ended it, or it was lost) before postgres-nio saw it close.
    var isLost: Bool { closing.isClosed || lost.load(ordering: .relaxed) }
    private let lost = Atomic<Bool>(false)

    /// The store's error for `error`, a statement's failure on this connection; notes whether it
    /// means the connection is gone.
    func fault(_ error: any Error) -> OffpeakError {
        if PostgresFault.endsConnection(error) { lost.store(true, ordering: .relaxed) }
        return PostgresFault.error(error, url: url)
    }

    /// Runs one statement, once every statement sent before it has been answered (the first of them
    /// that failed is the error), and returns its whole answer.
    func run(_ query: PostgresQuery) throws(OffpeakError) -> PostgresQueryResult {
        let (answer, earlier) = locked {
            () -> (EventLoopFuture<PostgresQueryResult>, [EventLoopFuture<PostgresQueryResult>]) in
            let answer = enqueue(query)
            flush()
            defer { sent = [] }
            return (answer, sent)
        }
        try settle(earlier)
        do {
            return try answer.wait()
        } catch {
            throw fault(error)
        }
    }

    /// Queues `query` to go with the next statement that is waited for; its answer is waited for by
    /// that statement (`run`) or the transaction's end (`takeSent`).
    func send(_ query: PostgresQuery) {
        locked { sent.append(enqueue(query)) }
    }

    /// Queues `query` as `send` does; its answer, to read later.
    func sendReading(_ query: PostgresQuery) -> EventLoopFuture<PostgresQueryResult> {
        locked {
            let answer = enqueue(query)
            sent.append(answer)
            return answer
        }
    }

    /// Queues `query` without recording it as sent: the caller waits for its answer itself.
    func queue(_ query: PostgresQuery) -> EventLoopFuture<PostgresQueryResult> {
        locked { enqueue(query) }
    }

    /// Hands every queued statement to the connection and returns the answers of those sent since
    /// the last statement waited for, which the caller now waits for.
    func takeSent() -> [EventLoopFuture<PostgresQueryResult>] {
        locked {
            flush()
            defer { sent = [] }
            return sent
        }
    }

    /// Hands every queued statement to the connection.
    func flushQueued() {
        locked { flush() }
    }

    /// Waits for `answers`; throws the first failure among them.
    func settle(_ answers: [EventLoopFuture<PostgresQueryResult>]) throws(OffpeakError) {
        var failure: (any Error)?
        for answer in answers {
            do { _ = try answer.wait() } catch { failure = failure ?? error }
        }
        if let failure { throw fault(failure) }
    }

    /// Closes the connection, failing what is still queued, and waits for the server to see it go.
    func close() {
        let dropped = locked {
            defer { queued = [] }
            return queued
        }
        for (_, answer) in dropped { answer.fail(ConnectionClosed()) }
        let future: EventLoopFuture<Void> = connection.close()
        _ = try? future.wait()
    }

    /// The connection closed before a statement had its answer.
    struct ConnectionClosed: Error {}

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    /// Queues `query` to go to the connection with the next `flush`; its answer, or a failure as
    /// soon as the connection closes (`answerOrLoss`). Called under `lock`.
    private func enqueue(_ query: PostgresQuery) -> EventLoopFuture<PostgresQueryResult> {
        let answer = connection.eventLoop.makePromise(of: PostgresQueryResult.self)
        queued.append((query, answer))
        return answerOrLoss(answer.futureResult)
    }

    /// Hands the queued statements to the connection, in order, in one task of its event loop: each
    /// statement handed over from this thread on its own woke the loop's thread once, a context
    /// switch that cost more than the statement's encoding. Called under `lock`.
    private func flush() {
        guard !queued.isEmpty else { return }
        let batch = queued
        queued = []
        let (connection, logger) = (self.connection, self.logger)
        connection.eventLoop.execute {
            for (query, answer) in batch { connection.query(query, logger: logger).cascade(to: answer) }
        }
    }

    /// `future`, or a failure as soon as the connection closes, whichever comes first.
    ///
    /// postgres-nio 1.33.2 was seen to leave a query unanswered forever on a connection the server
    /// had ended (`pg_terminate_backend`, 57P01): the query's future never completed although the
    /// channel was closed. Racing it with the connection's closing turns that into a lost
    /// connection. The race is registered with `closing` while the statement waits and removed once
    /// it is answered: a callback on `closeFuture` per statement would be kept until the connection
    /// closes, millions of them over a long run.
    private func answerOrLoss<Value: Sendable>(_ future: EventLoopFuture<Value>) -> EventLoopFuture<Value> {
        let promise = connection.eventLoop.makePromise(of: Value.self)
        let settled = Atomic<Bool>(false)
        let waiter = closing.register {
            if settled.exchange(true, ordering: .acquiringAndReleasing) { return }
            promise.fail(ConnectionClosed())
        }
        future.whenComplete { [closing] result in
            if let waiter { closing.remove(waiter) }
            if settled.exchange(true, ordering: .acquiringAndReleasing) { return }
            promise.completeWith(result)
        }
        if waiter == nil, !settled.exchange(true, ordering: .acquiringAndReleasing) {
            promise.fail(ConnectionClosed())
        }
        return promise.futureResult
    }

    /// The process's connection ids, for postgres-nio's log metadata.
    private static let nextID = Atomic<Int>(0)
}

/// What waits on a connection's answers and must fail when it closes (`PostgresLink.answerOrLoss`).
final class CloseWatch: Sendable {
    private struct State {
        var next = 0
        var failures: [Int: @Sendable () -> Void] = [:]
        var closed = false
    }

    private let state = Mutex(State())

    /// Whether the connection has closed.
    var isClosed: Bool { state.withLock { $0.closed } }

    /// Keeps `fail` until `remove` or the connection closes; nil when it has closed already.
    func register(_ fail: @escaping @Sendable () -> Void) -> Int? {
        state.withLock { state in
            guard !state.closed else { return nil }
            state.next += 1
            state.failures[state.next] = fail
            return state.next
        }
    }

    func remove(_ waiter: Int) {
        _ = state.withLock { $0.failures.removeValue(forKey: waiter) }
    }

    /// The connection closed: everything still waiting fails.
    func closed() {
        let failures = state.withLock { state in
            state.closed = true
            defer { state.failures = [:] }
            return Array(state.failures.values)
        }
        for fail in failures { fail() }
    }
}
