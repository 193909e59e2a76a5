import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Which store a workspace keeps its state in: the embedded SQLite file (the default) or a
/// PostgreSQL database shared with other hosts.
///
/// `store:` in offpeak.yaml says which (`sqlite`, or a `postgresql://` URL); the `OFFPEAK_STORE`
/// variable, when set and not empty, wins over it, so one host can be pointed elsewhere without
/// editing the workspace.
enum StoreLocation: Sendable, Equatable, CustomStringConvertible {
    case sqlite
    case postgres(PostgresURL)

    /// The variable that overrides `store:`.
    static let variable = "OFFPEAK_STORE"

    var description: String {
        switch self {
        case .sqlite: "sqlite"
        case .postgres(let url): url.description
        }
    }

    /// Reads `sqlite` or a PostgreSQL URL.
    /// - Throws: a sentence about what is wrong (never containing a password).
    static func parse(_ text: String, defaultUser: String) throws(PostgresURL.Problem) -> StoreLocation {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed == "sqlite" { return .sqlite }
        guard PostgresURL.looksLikeURL(trimmed) else {
            throw PostgresURL.Problem("expected 'sqlite' or a postgresql://USER@HOST:PORT/DATABASE URL")
        }
        return .postgres(try PostgresURL.parse(trimmed, defaultUser: defaultUser))
    }

    /// The store this process uses: `OFFPEAK_STORE` when set, else what offpeak.yaml says.
    /// - Throws: `.configuration` naming the variable when its value is not a store.
    static func resolve(
        configured: StoreLocation, environment: [String: String], defaultUser: String = StoreLocation.osUser
    ) throws(OffpeakError) -> StoreLocation {
        guard let text = environment[variable], !text.isEmpty else { return configured }
        do {
            return try parse(text, defaultUser: defaultUser)
        } catch {
            throw OffpeakError(.configuration, "\(variable): \(error.description)")
        }
    }

    /// The user this process runs as, libpq's default user name (`USER` is not trusted: su keeps it).
    static var osUser: String {
        guard let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name else { return "postgres" }
        return String(cString: name)
    }
}
