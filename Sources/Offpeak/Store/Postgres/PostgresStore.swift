import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import Synchronization

/// One connection to a PostgreSQL store, used synchronously.
///
/// offpeak's store API is synchronous (threads, typed throws), postgres-nio's is asynchronous: each
/// call here starts postgres-nio's `EventLoopFuture` API on the process's one event loop group
/// (`MultiThreadedEventLoopGroup.singleton`) and waits for it with `.wait()`. The callers are
/// offpeak's own threads, never an event loop's, so waiting cannot stall the loop it waits on.
///
/// A connection runs one statement at a time in order; a recursive lock makes a `transaction`
/// exclusive, so statements another thread sends meanwhile never land inside it.
final class PostgresStore: @unchecked Sendable {
    let url: PostgresURL
    let logger: Logger
    private let connection: PostgresConnection
    private let lock = NSRecursiveLock()
    private let closing = CloseWatch()
    /// Transactions open on this connection (nested ones run inside the outermost); guarded by `lock`.
    private var depth = 0
    /// Statements `send` sent that `query` has not yet seen answered; guarded by `lock`.
    private var sent: [EventLoopFuture<PostgresQueryResult>] = []
    /// Statements waiting to go to the connection together (`flush`), with the promises of their
    /// answers; guarded by `lock`.
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

    /// postgres-nio's future-returning `close()` (it also has an `async` one of the same name).
    private func closeConnection() -> EventLoopFuture<Void> {
        let future: EventLoopFuture<Void> = connection.close()
        return future
    }

    /// Connects to the store `url` names; the password is the URL's, else `PGPASSWORD`'s, else the
    /// password file's (`PostgresPassFile`).
    /// - Throws: `.configuration` (78) for what the user must fix, `.temporaryFailure` (75) for a
    ///   server that is down, unreachable or starting (`PostgresFault`).
    static func connect(
        _ url: PostgresURL, environment: [String: String], logger: Logger
    ) throws(OffpeakError) -> PostgresStore {
        let password =
            url.password ?? environment["PGPASSWORD"].flatMap { $0.isEmpty ? nil : PostgresPassword($0) }
            ?? PostgresPassFile.password(for: url, environment: environment, logger: logger)
        var configuration = PostgresConnection.Configuration(
            host: url.host, port: url.port, username: url.user, password: password?.revealed,
            database: url.database, tls: try tls(for: url))
        configuration.options.additionalStartupParameters = [("application_name", url.applicationName)]
        if let seconds = url.connectTimeout {
            configuration.options.connectTimeout = .seconds(Int64(seconds))
        }
        // postgres-nio's trace level logs protocol messages; offpeak's `-v` stops at debug.
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .debug)
        let future = PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration,
            id: nextID.wrappingAdd(1, ordering: .relaxed).newValue, logger: quiet)
        do {
            return PostgresStore(url: url, connection: try future.wait(), logger: quiet)
        } catch {
            throw PostgresFault.error(error, url: url)
        }
    }

    /// libpq's `sslmode` as postgres-nio's TLS setting: `prefer` and `require` encrypt without
    /// checking the certificate (as libpq does without a root certificate); `verify-ca` checks it
    /// against the system's trusted authorities, `verify-full` its host name too.
    static func tls(for url: PostgresURL) throws(OffpeakError) -> PostgresConnection.Configuration.TLS {
        var tls = TLSConfiguration.makeClientConfiguration()
        switch url.sslMode {
        case .disable: return .disable
        case .prefer, .require: tls.certificateVerification = .none
        case .verifyCA: tls.certificateVerification = .noHostnameVerification
        case .verifyFull: tls.certificateVerification = .fullVerification
        }
        let context: NIOSSLContext
        do { context = try NIOSSLContext(configuration: tls) } catch {
            throw OffpeakError(
                .configuration,
                "cannot set up TLS for PostgreSQL at \(url.endpoint) (sslmode=\(url.sslMode.rawValue))",
                cause: PostgresFault.describe(error))
        }
        return url.sslMode == .prefer ? .prefer(context) : .require(context)
    }

    /// Runs one statement and returns its rows, once every statement `send` sent before it has been
    /// answered (the first of them that failed is the error).
    @discardableResult
    func query(_ query: PostgresQuery) throws(OffpeakError) -> [PostgresRow] {
        Array(try run(query).rows)
    }

    /// Runs one statement that changes rows and returns how many it changed (its command tag's
    /// count), as `query` runs it.
    @discardableResult
    func change(_ query: PostgresQuery) throws(OffpeakError) -> Int {
        try run(query).metadata.rows ?? 0
    }

    /// One statement's whole answer, once every statement `send` sent before it has been answered.
    private func run(_ query: PostgresQuery) throws(OffpeakError) -> PostgresQueryResult {
        lock.lock()
        defer { lock.unlock() }
        let answer = enqueue(query)
        flush()
        try settleSent()
        do {
            return try answer.wait()
        } catch {
            throw PostgresFault.error(error, url: url)
        }
    }

    /// Sends a statement whose rows nobody reads, inside a transaction, without waiting for its
    /// answer: the connection carries it ahead of the next one, and the two cost one round trip. Its
    /// failure is thrown by the transaction's next `query` (at the latest its `COMMIT`), which rolls
    /// the transaction back. Outside a transaction it is `query`: nothing would be left to report
    /// a failure.
    func send(_ query: PostgresQuery) throws(OffpeakError) {
        lock.lock()
        defer { lock.unlock() }
        guard depth > 0 else {
            try self.query(query)
            return
        }
        sent.append(enqueue(query))
    }

    /// Sends a statement whose rows are read once the transaction has moved on: inside a
    /// transaction it goes as `send` does, and its rows are there once the next `query` (at the
    /// latest the `COMMIT`) has been answered, so reading them costs no round trip of its own. Outside
    /// a transaction it runs now.
    func sendReading(_ query: PostgresQuery) throws(OffpeakError) -> SentRows {
        lock.lock()
        defer { lock.unlock() }
        guard depth > 0 else { return .read(try self.query(query)) }
        let answer = enqueue(query)
        sent.append(answer)
        return .sent(answer, store: self)
    }

    /// The rows of a statement `sendReading` sent.
    enum SentRows: Sendable {
        /// Run at once, outside a transaction.
        case read([PostgresRow])
        /// Queued in a transaction on `store`.
        case sent(EventLoopFuture<PostgresQueryResult>, store: PostgresStore)

        /// The rows; waits for them when read before the statement after it was answered.
        func get() throws(OffpeakError) -> [PostgresRow] {
            switch self {
            case .read(let rows): return rows
            case .sent(let answer, let store):
                store.withLock { $0.flush() }
                do { return Array(try answer.wait().rows) } catch {
                    throw PostgresFault.error(error, url: store.url)
                }
            }
        }
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

    /// `body` under the connection's lock.
    private func withLock<T>(_ body: (PostgresStore) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(self)
    }

    /// Waits for the answers of the statements `send` sent; throws the first failure among them.
    private func settleSent() throws(OffpeakError) {
        guard !sent.isEmpty else { return }
        let waiting = sent
        sent = []
        var failure: (any Error)?
        for answer in waiting {
            do { _ = try answer.wait() } catch { failure = failure ?? error }
        }
        if let failure { throw PostgresFault.error(failure, url: url) }
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

    /// The connection closed before a statement had its answer.
    struct ConnectionClosed: Error {}

    /// Runs `body` in one transaction: all of it commits, or none of it (any error rolls back).
    /// - Parameter begin: the statement that opens it, to ask for another isolation level.
    func transaction<T>(begin: String = "BEGIN", _ body: () throws(OffpeakError) -> T) throws(OffpeakError)
        -> T
    {
        lock.lock()
        defer { lock.unlock() }
        depth += 1
        defer { depth -= 1 }
        // Sent, not waited for: the body's first statement goes after it on the connection, so its
        // answer comes after BEGIN's, and the transaction costs one round trip less.
        let opened = enqueue(PostgresQuery(unsafeSQL: begin))
        do throws(OffpeakError) {
            let value = try body()
            flush()
            do { _ = try opened.wait() } catch { throw PostgresFault.error(error, url: url) }
            try query("COMMIT")
            return value
        } catch {
            // A lost connection rolls back on the server; a failed ROLLBACK adds nothing to say.
            _ = try? query("ROLLBACK")
            throw error
        }
    }

    /// Runs `body` in one transaction sent whole, its `COMMIT` included, without waiting for the
    /// answers: the caller goes on while the server works, and reads the outcome later
    /// (`SentTransaction.wait`). Whatever this connection runs next runs after it, so it reads
    /// what the transaction wrote. Nested in a transaction, `body` runs in that one, which commits it.
    /// - Throws: what `body` throws, the transaction rolled back.
    func transactionSent<T>(_ body: () throws(OffpeakError) -> T) throws(OffpeakError) -> (T, SentTransaction)
    {
        lock.lock()
        defer { lock.unlock() }
        guard depth == 0 else { return (try body(), SentTransaction(answers: [], store: self)) }
        depth += 1
        defer { depth -= 1 }
        let opened = enqueue(PostgresQuery(unsafeSQL: "BEGIN"))
        do throws(OffpeakError) {
            let value = try body()
            let committed = enqueue(PostgresQuery(unsafeSQL: "COMMIT"))
            flush()
            defer { sent = [] }
            return (value, SentTransaction(answers: [opened] + sent + [committed], store: self))
        } catch {
            _ = try? query("ROLLBACK")
            throw error
        }
    }

    /// A transaction sent whole (`transactionSent`): its statements' answers, `BEGIN` to `COMMIT`.
    struct SentTransaction: Sendable {
        let answers: [EventLoopFuture<PostgresQueryResult>]
        let store: PostgresStore

        /// Waits until the transaction is done. A failed statement rolled it back (the server
        /// answers its `COMMIT` with a rollback): the first failure is thrown, nothing was written.
        func wait() throws(OffpeakError) {
            var failure: (any Error)?
            for answer in answers {
                do { _ = try answer.wait() } catch { failure = failure ?? error }
            }
            if let failure { throw PostgresFault.error(failure, url: store.url) }
        }
    }

    /// Decodes one row's columns, a decoding failure being a store error naming the server.
    func decode<each Column: PostgresDecodable>(
        _ row: PostgresRow, as type: (repeat each Column).Type
    ) throws(OffpeakError) -> (repeat each Column) {
        do { return try row.decode(type, context: .default) } catch {
            let cause =
                (error as? PostgresDecodingError).map { "\($0.code) in column \($0.columnName)" }
                ?? "\(error)"
            throw OffpeakError(
                .ioError, "PostgreSQL at \(url.endpoint) answered a row offpeak cannot read", cause: cause)
        }
    }

    /// Closes the connection, waiting for the server to see it go.
    func close() {
        withLock { store in
            for (_, answer) in store.queued { answer.fail(ConnectionClosed()) }
            store.queued = []
        }
        _ = try? closeConnection().wait()
    }

    /// The process's connection ids, for postgres-nio's log metadata.
    private static let nextID = Atomic<Int>(0)
}

/// What waits on a connection's answers and must fail when it closes (`PostgresStore.answerOrLoss`).
final class CloseWatch: Sendable {
    private struct State {
        var next = 0
        var failures: [Int: @Sendable () -> Void] = [:]
        var closed = false
    }

    private let state = Mutex(State())

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
