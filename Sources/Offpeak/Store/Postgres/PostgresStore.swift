import Foundation
import Logging
import NIOCore
import NIOSSL
import PostgresNIO
import Synchronization

/// A PostgreSQL store's connections (`PostgresLink`), lent to offpeak's threads, used synchronously.
///
/// The store's connections are a pool (`PostgresPool`): a thread borrows one for one statement, or for a
/// whole transaction (`transaction`, `transactionSent`) or scope (`pinned`): every statement the
/// thread sends in it goes to that connection. So a read never queues behind another thread's
/// transaction, and two threads' transactions run side by side, each on its own connection.
///
/// A transaction sent whole (`transactionSent`) returns its connection while its `COMMIT` is still
/// on the way. Whatever the thread sends next must see what it wrote: a statement on another
/// connection first waits for that `COMMIT`'s answer (read-your-writes), one on the same connection
/// runs after it anyway.
final class PostgresStore: @unchecked Sendable {
    let url: PostgresURL
    let logger: Logger
    private let pool: PostgresPool
    /// What each thread is doing with the store: the connection its transaction or scope holds,
    /// and its last transaction sent whole while the `COMMIT` has no answer. Keyed by `pthread_self`.
    private let threads = Mutex<[pthread_t: ThreadUse]>([:])

    private struct ThreadUse {
        var link: PostgresLink?
        /// Whether `link` holds a transaction (a nested one runs inside it), not only a `pinned` scope.
        var inTransaction = false
        var commit: SentCommit?

        var isEmpty: Bool { link == nil && commit == nil }
    }

    /// A thread's last transaction sent whole: the connection it went on and its `COMMIT`'s answer.
    private struct SentCommit {
        let link: PostgresLink
        let answer: EventLoopFuture<PostgresQueryResult>
    }

    private init(
        url: PostgresURL, configuration: PostgresConnection.Configuration, logger: Logger, first: PostgresLink
    ) {
        self.url = url
        self.logger = logger
        pool = PostgresPool(url: url, configuration: configuration, logger: logger, first: first)
    }

    deinit { close() }

    /// Connects to the store `url` names; the password is the URL's, else `PGPASSWORD`'s, else the
    /// password file's (`PostgresPassFile`). The first connection is made here, so what is wrong
    /// with the URL or the server is said at once.
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
        let first = try PostgresLink.connect(url, configuration: configuration, logger: quiet)
        return PostgresStore(url: url, configuration: configuration, logger: quiet, first: first)
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

    /// Runs one statement and returns its rows, once every statement sent before it on its
    /// connection has been answered (the first of them that failed is the error).
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

    private func run(_ query: PostgresQuery) throws(OffpeakError) -> PostgresQueryResult {
        if let link = use()?.link { return try link.run(query) }
        return try lending { link throws(OffpeakError) in try link.run(query) }
    }

    /// Sends a statement whose rows nobody reads, inside a transaction, without waiting for its
    /// answer: the connection carries it ahead of the next one, and the two cost one round trip. Its
    /// failure is thrown by the transaction's next `query` (at the latest its `COMMIT`), which rolls
    /// the transaction back. Outside a transaction it is `query`: nothing would be left to report
    /// a failure.
    func send(_ query: PostgresQuery) throws(OffpeakError) {
        guard let use = use(), let link = use.link, use.inTransaction else {
            try self.query(query)
            return
        }
        link.send(query)
    }

    /// Sends a statement whose rows are read once the transaction has moved on: inside a
    /// transaction it goes as `send` does, and its rows are there once the next `query` (at the
    /// latest the `COMMIT`) has been answered, so reading them costs no round trip of its own. Outside
    /// a transaction it runs now.
    func sendReading(_ query: PostgresQuery) throws(OffpeakError) -> SentRows {
        guard let use = use(), let link = use.link, use.inTransaction else {
            return .read(try self.query(query))
        }
        return .sent(link.sendReading(query), link: link)
    }

    /// The rows of a statement `sendReading` sent.
    enum SentRows: Sendable {
        /// Run at once, outside a transaction.
        case read([PostgresRow])
        /// Queued in a transaction on `link`.
        case sent(EventLoopFuture<PostgresQueryResult>, link: PostgresLink)

        /// The rows; waits for them when read before the statement after it was answered.
        func get() throws(OffpeakError) -> [PostgresRow] {
            switch self {
            case .read(let rows): return rows
            case .sent(let answer, let link):
                link.flushQueued()
                do { return Array(try answer.wait().rows) } catch { throw link.fault(error) }
            }
        }
    }

    /// Runs `body` with one connection: every statement it sends goes to that connection, in
    /// order, so what a session sets (an advisory lock, a setting) holds for all of it.
    func pinned<T>(_ body: () throws(OffpeakError) -> T) throws(OffpeakError) -> T {
        if use()?.link != nil { return try body() }
        return try lending { link throws(OffpeakError) in try bound(to: link, inTransaction: false, body) }
    }

    /// Runs `body` in one transaction: all of it commits, or none of it (any error rolls back).
    /// Inside a transaction, `body` is part of it.
    /// - Parameter begin: the statement that opens it, to ask for another isolation level.
    func transaction<T>(begin: String = "BEGIN", _ body: () throws(OffpeakError) -> T) throws(OffpeakError)
        -> T
    {
        func transact(_ link: PostgresLink) throws(OffpeakError) -> T {
            // Sent, not waited for: the body's first statement goes after it on the connection, so
            // its answer comes after BEGIN's, and the transaction costs one round trip less.
            let opened = link.queue(PostgresQuery(unsafeSQL: begin))
            do throws(OffpeakError) {
                let value = try bound(to: link, inTransaction: true, body)
                link.flushQueued()
                try link.settle([opened])
                _ = try link.run("COMMIT")
                return value
            } catch {
                // A lost connection rolls back on the server; a failed ROLLBACK adds nothing to say.
                _ = try? link.run("ROLLBACK")
                throw error
            }
        }
        guard let use = use(), let link = use.link else { return try lending(transact) }
        return use.inTransaction ? try body() : try transact(link)
    }

    /// Runs `body` in one transaction sent whole, its `COMMIT` included, without waiting for the
    /// answers: the caller goes on while the server works, and reads the outcome later
    /// (`SentTransaction.wait`). What this thread runs next runs after it, so it reads what the
    /// transaction wrote. Nested in a transaction, `body` runs in that one, which commits it.
    /// - Throws: what `body` throws, the transaction rolled back.
    func transactionSent<T>(_ body: () throws(OffpeakError) -> T) throws(OffpeakError) -> (T, SentTransaction)
    {
        func send(_ link: PostgresLink) throws(OffpeakError) -> (T, SentTransaction) {
            let opened = link.queue("BEGIN")
            do throws(OffpeakError) {
                let value = try bound(to: link, inTransaction: true, body)
                let committed = link.queue("COMMIT")
                let answers = [opened] + link.takeSent() + [committed]
                remember(SentCommit(link: link, answer: committed))
                return (value, SentTransaction(answers: answers, link: link))
            } catch {
                _ = try? link.run("ROLLBACK")
                throw error
            }
        }
        guard let use = use(), let link = use.link else { return try lending(send) }
        guard !use.inTransaction else { return (try body(), SentTransaction(answers: [], link: link)) }
        return try send(link)
    }

    /// A transaction sent whole (`transactionSent`): its statements' answers, `BEGIN` to `COMMIT`.
    struct SentTransaction: Sendable {
        let answers: [EventLoopFuture<PostgresQueryResult>]
        /// The connection it went on.
        let link: PostgresLink

        /// Waits until the transaction is done. A failed statement rolled it back (the server
        /// answers its `COMMIT` with a rollback): the first failure is thrown, nothing was written.
        func wait() throws(OffpeakError) { try link.settle(answers) }
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

    /// Closes every connection: the idle ones now, a lent one when it comes back.
    func close() { pool.close() }

    /// Borrows a connection for `body`, and gives it back.
    private func lending<T>(_ body: (PostgresLink) throws(OffpeakError) -> T) throws(OffpeakError) -> T {
        let link = try borrow()
        defer { pool.giveBack(link) }
        return try body(link)
    }

    /// A connection of the pool's, the one this thread's last transaction sent whole went on if
    /// it is idle. When it is another, that transaction's `COMMIT` is waited for first, so the thread
    /// reads what it wrote.
    private func borrow() throws(OffpeakError) -> PostgresLink {
        let commit = use()?.commit
        let link = try pool.borrow(preferring: commit?.link)
        if let commit, commit.link !== link {
            // Its failure is the transaction's owner's to read (`SentTransaction.wait`).
            _ = try? commit.answer.wait()
        }
        return link
    }

    // MARK: The threads' use

    private func use() -> ThreadUse? {
        let thread = pthread_self()
        return threads.withLock { $0[thread] }
    }

    /// Runs `body` with this thread's statements going to `link`.
    private func bound<T>(to link: PostgresLink, inTransaction: Bool, _ body: () throws(OffpeakError) -> T)
        throws(OffpeakError) -> T
    {
        let thread = pthread_self()
        let before = threads.withLock { threads in
            let before = threads[thread]
            threads[thread] = ThreadUse(link: link, inTransaction: inTransaction, commit: before?.commit)
            return before
        }
        defer {
            threads.withLock { threads in
                let commit = threads[thread]?.commit
                let after = ThreadUse(
                    link: before?.link, inTransaction: before?.inTransaction ?? false, commit: commit)
                threads[thread] = after.isEmpty ? nil : after
            }
        }
        return try body()
    }

    /// Records this thread's transaction sent whole until its `COMMIT` is answered.
    private func remember(_ commit: SentCommit) {
        let thread = pthread_self()
        threads.withLock { $0[thread, default: ThreadUse()].commit = commit }
        commit.answer.whenComplete { [weak self] _ in
            self?.threads.withLock { threads in
                guard let use = threads[thread], use.commit?.answer === commit.answer else { return }
                threads[thread]?.commit = nil
                if threads[thread]?.isEmpty == true { threads[thread] = nil }
            }
        }
    }
}
