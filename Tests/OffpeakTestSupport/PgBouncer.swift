import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Debian's `pgbouncer` in front of the test cluster, in transaction mode with a pool smaller than
/// the hosts a test runs (two server connections a database), as many teams run PostgreSQL. With
/// `OFFPEAK_TEST_POOLER=pgbouncer` (and `OFFPEAK_TEST_STORE=postgresql`) every workspace's store URL
/// goes through it (`WorkspaceDatabase`); the tests' own `psql` still reaches the server itself.
///
/// It listens on a free port of 127.0.0.1, authenticates clients with scram-sha-256 from a user
/// list holding the cluster's password (which it also logs in to the server with), and refuses to
/// run as root: as root it runs as `nobody` (`setpriv`), from a folder of the cluster's.
public final class PgBouncer: @unchecked Sendable {
    /// The one pooler of this test process, started on first use, in front of the shared cluster.
    public static let shared: PgBouncer = {
        do { return try PgBouncer(cluster: .shared) } catch {
            fatalError("cannot start pgbouncer in front of the test cluster: \(error)")
        }
    }()

    /// Whether the suite's stores go through the pooler (`OFFPEAK_TEST_POOLER=pgbouncer`).
    public static let inUse: Bool = ProcessInfo.processInfo.environment["OFFPEAK_TEST_POOLER"] == "pgbouncer"

    public let port: Int
    private let cluster: PostgresCluster
    private let folder: URL

    /// Server connections a database may have: fewer than the three hosts the tests run.
    public static let poolSize = 2

    init(cluster: PostgresCluster) throws {
        self.cluster = cluster
        folder = cluster.folder.appendingPathComponent("pgbouncer", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        port = try PostgresCluster.freePort()
        let ini = """
            [databases]
            * = host=127.0.0.1 port=\(cluster.port)

            [pgbouncer]
            listen_addr = 127.0.0.1
            listen_port = \(port)
            unix_socket_dir =
            auth_type = scram-sha-256
            auth_file = \(folder.path)/userlist.txt
            pool_mode = transaction
            default_pool_size = \(Self.poolSize)
            max_client_conn = 500
            ignore_startup_parameters = extra_float_digits,options
            admin_users = \(cluster.user)
            logfile = \(folder.path)/pgbouncer.log
            pidfile = \(folder.path)/pgbouncer.pid
            """
        try Data(ini.utf8).write(to: folder.appendingPathComponent("pgbouncer.ini"))
        try Data("\"\(cluster.user)\" \"\(cluster.password)\"\n".utf8).write(
            to: folder.appendingPathComponent("userlist.txt"))
        if OtherUser.isRoot {
            for name in ["", "pgbouncer.ini", "userlist.txt"] {
                chown(folder.appendingPathComponent(name).path, OtherUser.nobody, OtherUser.nobody)
            }
        }
        chmod(folder.path, 0o700)
        let user =
            OtherUser.isRoot
            ? ["setpriv", "--reuid=\(OtherUser.nobody)", "--regid=\(OtherUser.nobody)", "--clear-groups"] : []
        let (status, output) = try PostgresCluster.spawn(
            user + ["/usr/sbin/pgbouncer", "-d", folder.appendingPathComponent("pgbouncer.ini").path],
            environment: [:], in: folder)
        guard status == 0 else { throw PostgresCluster.ClusterError.failed("pgbouncer: \(output)") }
        // Started once it accepts connections.
        let deadline = Date() + 10
        while !Self.accepts(port: port), Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        // Its pid, not its pid file: the cluster's folder, which holds the file, is removed at exit
        // before the pooler is stopped.
        let pidFile = folder.appendingPathComponent("pgbouncer.pid").path
        if let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
            let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            Self.running.withLock { $0.append(pid) }
        }
    }

    /// The URL of `database` through the pooler, without the password.
    public func url(database: String) -> String {
        "postgresql://\(cluster.user)@127.0.0.1:\(port)/\(database)?sslmode=disable"
    }

    /// The lines of the pooler's `SHOW what` (its admin console), fields separated by `|`.
    public func show(_ what: String) throws -> [String] {
        let arguments = [
            cluster.psqlBinary.path, "-h", "127.0.0.1", "-p", String(port), "-U", cluster.user, "-d",
            "pgbouncer",
            "-AtX", "-c", "SHOW \(what)",
        ]
        let (status, output) = try PostgresCluster.spawn(
            arguments, environment: ["PGPASSWORD": cluster.password], in: folder)
        guard status == 0 else { throw PostgresCluster.ClusterError.failed("psql to pgbouncer: \(output)") }
        return output.split(separator: "\n").map(String.init)
    }

    private static func accepts(port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// Poolers still running: killed at exit. SIGKILL: once its cluster is gone, pgbouncer 1.18
    /// took no notice of SIGTERM, SIGINT or SIGQUIT, and every pass left one running.
    private static let running: Mutex<[pid_t]> = {
        atexit {
            for pid in PgBouncer.running.withLock({ $0 }) { kill(pid, SIGKILL) }
        }
        return Mutex([])
    }()
}
