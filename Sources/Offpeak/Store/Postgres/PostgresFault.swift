import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO

#if canImport(Glibc)
import Glibc
#endif

/// What went wrong talking to PostgreSQL, as one line a user can act on, with the exit status that
/// tells a script whether to fix something (78) or wait and run again (75).
///
/// Every message names the server as `host:port` (and the database and user where they are the
/// problem) and never the password: messages are built here from what offpeak knows, and a
/// server's own text is added only where no SQLSTATE below says it better.
enum PostgresFault {
    /// SQLSTATE codes offpeak answers deliberately (PostgreSQL's Appendix A).
    enum SQLState: String {
        case invalidPassword = "28P01"
        case invalidAuthorization = "28000"
        case invalidCatalogName = "3D000"
        case adminShutdown = "57P01"
        case crashShutdown = "57P02"
        case cannotConnectNow = "57P03"
        case queryCanceled = "57014"
        case diskFull = "53100"
        case outOfMemory = "53200"
        case tooManyConnections = "53300"
    }

    /// The `OffpeakError` for `error`, raised talking to the server of `url`.
    static func error(_ error: any Error, url: PostgresURL) -> OffpeakError {
        if let error = error as? OffpeakError { return error }
        let at = "PostgreSQL at \(url.endpoint)"
        if error is PostgresLink.ConnectionClosed {
            return OffpeakError(
                .temporaryFailure, "lost the connection to \(at); the work resumes when it is back")
        }
        guard let error = error as? PSQLError else { return unreachable(error, at: at, url: url) }
        switch error.code {
        case .server:
            return server(error, at: at, url: url)
        case .sslUnsupported:
            return OffpeakError(
                .configuration, "\(at) does not offer TLS, which sslmode=\(url.sslMode.rawValue) requires")
        case .failedToAddSSLHandler:
            return OffpeakError(
                .configuration, "cannot set up TLS to \(at) (sslmode=\(url.sslMode.rawValue))",
                cause: error.underlying.map(describe))
        case .authMechanismRequiresPassword:
            return OffpeakError(
                .configuration,
                "\(at) asks user '\(url.user)' for a password and none was given "
                    + "(in the URL, PGPASSWORD or \(PostgresPassFile.variable)/~/.pgpass)")
        case .unsupportedAuthMechanism, .saslError:
            return OffpeakError(
                .configuration, "\(at) wants an authentication offpeak cannot do for user '\(url.user)'",
                cause: error.underlying.map(describe))
        case .connectionError:
            return unreachable(error.underlying ?? error, at: at, url: url)
        case .serverClosedConnection, .uncleanShutdown, .clientClosedConnection:
            return OffpeakError(
                .temporaryFailure, "lost the connection to \(at); the work resumes when it is back",
                cause: error.underlying.map(describe))
        default:
            return OffpeakError(.ioError, "\(at): \(error.code)", cause: error.underlying.map(describe))
        }
    }

    /// Whether `error` means the connection is gone (lost, or ended by the server), so it is not
    /// lent again; a statement's own failure (a timeout, a constraint) leaves it usable.
    static func endsConnection(_ error: any Error) -> Bool {
        if error is PostgresLink.ConnectionClosed { return true }
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        case .serverClosedConnection, .uncleanShutdown, .clientClosedConnection, .connectionError:
            return true
        case .server:
            let code = error.serverInfo?[.sqlState] ?? ""
            return code.hasPrefix("57P") || code.hasPrefix("08")
        default:
            return false
        }
    }

    /// An error the server sent, by its SQLSTATE.
    private static func server(_ error: PSQLError, at: String, url: PostgresURL) -> OffpeakError {
        let text = error.serverInfo?[.message] ?? "an error"
        let code = error.serverInfo?[.sqlState] ?? ""
        let database = "database '\(url.database)'"
        switch SQLState(rawValue: code) {
        case .invalidPassword:
            return OffpeakError(
                .configuration,
                "\(at) refused the password of user '\(url.user)' "
                    + "(from the URL, PGPASSWORD or \(PostgresPassFile.variable)/~/.pgpass)")
        case .invalidAuthorization:
            return OffpeakError(
                .configuration, "\(at) does not let user '\(url.user)' into \(database)", cause: text)
        case .invalidCatalogName:
            return OffpeakError(.configuration, "\(database) does not exist on \(at)")
        case .adminShutdown, .crashShutdown, .cannotConnectNow:
            return OffpeakError(
                .temporaryFailure, "\(at) is shutting down or starting up; the work resumes when it is back",
                cause: text)
        case .queryCanceled:
            return OffpeakError(
                .temporaryFailure,
                "a statement on \(at) was canceled (statement_timeout or a cancel request)",
                cause: text)
        case .diskFull:
            return OffpeakError(.temporaryFailure, "\(at) is out of disk space", cause: text)
        case .outOfMemory, .tooManyConnections:
            return OffpeakError(.temporaryFailure, "\(at) cannot take the work now", cause: text)
        case nil:
            // A trigger of a store `offpeak store copy` moved (`StoreMove`).
            if code == PostgresStore.movedState { return StoreMove.error(text) }
            if code == PostgresSchema.leaseLostState {
                return LeaseLost.error(runID: text, holder: error.serverInfo?[.detail] ?? "another process")
            }
            if code == PostgresSchema.claimLostState { return ClaimLost.error(runID: text) }
            // Class 08: the connection failed on the server's side.
            if code.hasPrefix("08") {
                return OffpeakError(.temporaryFailure, "lost the connection to \(at)", cause: text)
            }
            return OffpeakError(.ioError, "\(at) \(database): \(text) (SQLSTATE \(code))")
        }
    }

    /// The server could not be reached: refused, no answer in time, no such host. TLS that fails
    /// its checks (a certificate under verify-ca or verify-full) is configuration, not absence.
    private static func unreachable(_ error: any Error, at: String, url: PostgresURL) -> OffpeakError {
        if error is NIOSSLError || error is BoringSSLError {
            return OffpeakError(
                .configuration, "TLS to \(at) failed (sslmode=\(url.sslMode.rawValue))",
                cause: describe(error))
        }
        return OffpeakError(
            .temporaryFailure, "cannot reach \(at) (database '\(url.database)')", cause: describe(error))
    }

    /// A short cause for the common transport errors.
    static func describe(_ error: any Error) -> String {
        switch error {
        case let error as IOError:
            return String(cString: strerror(error.errnoCode))
        case let error as NIOConnectionError:
            if let first = error.connectionErrors.first { return describe(first.error) }
            if let dns = error.dnsAError ?? error.dnsAAAAError { return "the host name: \(describe(dns))" }
            return "no address for the host name"
        case ChannelError.connectTimeout(let amount):
            return "no answer within \(amount.nanoseconds / 1_000_000_000) s"
        default:
            return "\(error)"
        }
    }
}
