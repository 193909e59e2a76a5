import Foundation
import Synchronization

/// Which engine the suite's workspaces keep their store on. `OFFPEAK_TEST_STORE=postgresql` gives
/// each `TemporaryWorkspace` its own database on the test process's cluster
/// (`PostgresCluster.shared`), which the commands a test runs in it use (`OFFPEAK_STORE`); unset or
/// `sqlite`, the embedded file, as a user gets it.
public enum TestStore {
    public static let onPostgres: Bool = {
        let value = ProcessInfo.processInfo.environment["OFFPEAK_TEST_STORE"] ?? ""
        return value == "postgresql"
    }()

    public static var name: String { onPostgres ? "postgresql" : "sqlite" }

    /// Why a test runs on the SQLite pass only: it tests the SQLite engine itself (its file's
    /// damage, permissions or journal, its migrations, what GRDB reads back, a copy from its file),
    /// which has no counterpart on the server. Rows a test sets up or looks at are not a reason: it
    /// does that on either engine (`Store.execute`, `TemporaryWorkspace.psql`).
    public static let sqliteOnlyReason = "tests the SQLite engine's own file, migrations or format"
}

/// A workspace's database on the test cluster, made when a command first needs it and dropped with
/// the workspace.
final class WorkspaceDatabase: Sendable {
    private let url = Mutex<String?>(nil)

    /// The environment that points a command at this workspace's database.
    func environment() throws -> [String: String] {
        let made = try url.withLock { url in
            if let url { return url }
            let made = try PostgresCluster.shared.makeDatabase()
            url = made
            return made
        }
        // Through the pooler when the suite runs behind one; `psql` reaches the server itself.
        let store =
            PgBouncer.inUse
            ? PgBouncer.shared.url(
                database: String(made.split(separator: "/").last?.split(separator: "?").first ?? ""))
            : made
        return ["OFFPEAK_STORE": store, "PGPASSWORD": PostgresCluster.shared.password]
    }

    deinit {
        guard let made = url.withLock({ $0 }),
            let name = made.split(separator: "/").last?.split(separator: "?").first
        else { return }
        _ = try? PostgresCluster.shared.psql(
            "DROP DATABASE IF EXISTS \(name) WITH (FORCE)", database: "postgres")
    }
}
