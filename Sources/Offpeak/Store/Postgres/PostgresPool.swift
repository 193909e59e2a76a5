import Foundation
import Logging
import PostgresNIO

/// The connections of a PostgreSQL store (`PostgresStore`): idle ones lent on demand, new ones
/// opened while fewer than `maximumLinks` are, and a borrower waiting when all are lent.
///
/// Not postgres-nio's `PostgresClient`: its pool retries a connection that fails to open for 60 s
/// (`circuitBreakerTripAfter`, which its configuration does not expose) before a lease fails, so
/// a wrong password or a server that is down would hold a command for a minute instead of ending
/// it with 78 or 75 at once; and it lends a connection only for an `async` closure's length, where
/// offpeak's threads hold one across a synchronous transaction.
final class PostgresPool: @unchecked Sendable {
    /// A process's threads rarely use the store two at a time (a run's loop; `submit`'s parser and
    /// its commits; a tick's lock); four leaves room without crowding a server that hosts share.
    static let maximumLinks = 4

    private let url: PostgresURL
    private let configuration: PostgresConnection.Configuration
    private let logger: Logger
    /// Guards the fields below; signalled when a connection comes back.
    private let condition = NSCondition()
    /// Connections nobody borrowed, the last returned last.
    private var idle: [PostgresLink]
    /// Connections open: idle and lent.
    private var open: Int
    /// Whether the store closed: a connection given back then is closed.
    private var isClosed = false

    init(
        url: PostgresURL, configuration: PostgresConnection.Configuration, logger: Logger, first: PostgresLink
    ) {
        self.url = url
        self.configuration = configuration
        self.logger = logger
        idle = [first]
        open = 1
    }

    /// `preferring` when it is idle, else the idle connection returned last (a thread that uses
    /// the store alone keeps one connection, and what it set on it), else a new one while fewer
    /// than `maximumLinks` are open; else waits for one to come back.
    /// - Throws: a new connection's faults (`PostgresLink.connect`).
    func borrow(preferring: PostgresLink?) throws(OffpeakError) -> PostgresLink {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if isClosed {
                throw OffpeakError(
                    .software, "the PostgreSQL store at \(url.endpoint) was used after it closed")
            }
            if let preferring, let index = idle.firstIndex(where: { $0 === preferring }) {
                return idle.remove(at: index)
            }
            if let last = idle.popLast() { return last }
            if open < Self.maximumLinks { return try opened() }
            condition.wait()
        }
    }

    /// A new connection, counted before it is made so no other borrower exceeds the limit while it
    /// connects. Called with `condition` locked; unlocks it while connecting.
    private func opened() throws(OffpeakError) -> PostgresLink {
        open += 1
        condition.unlock()
        let made: Result<PostgresLink, OffpeakError>
        do {
            made = .success(try PostgresLink.connect(url, configuration: configuration, logger: logger))
        } catch {
            made = .failure(error)
        }
        condition.lock()
        if case .failure = made {
            open -= 1
            condition.signal()
        }
        return try made.get()
    }

    /// Returns a borrowed connection: to the idle ones, or closed when it was lost or the store
    /// has closed (the next borrower opens a new one).
    func giveBack(_ link: PostgresLink) {
        condition.lock()
        let keep = !isClosed && !link.isLost
        if keep { idle.append(link) } else { open -= 1 }
        condition.signal()
        condition.unlock()
        if !keep { link.close() }
    }

    /// Closes the idle connections now; a lent one closes when it comes back.
    func close() {
        condition.lock()
        isClosed = true
        let closing = idle
        open -= closing.count
        idle = []
        condition.broadcast()
        condition.unlock()
        for link in closing { link.close() }
    }
}
