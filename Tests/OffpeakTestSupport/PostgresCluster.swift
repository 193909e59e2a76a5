import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL cluster for tests: `initdb` into a fresh temporary folder, a server on a
/// free port of 127.0.0.1 (its unix socket in that folder), a database per test, and
/// `pg_ctl stop -m immediate` plus the folder's removal when it is released or the process exits.
///
/// Host connections authenticate with scram-sha-256 and a random password, so a wrong password is
/// refused as on a real server. PostgreSQL refuses to run as root: as root (CI), `initdb` and
/// `pg_ctl` run as `nobody` (`setpriv`), the folder is made owned by `nobody` with mode 0700, and
/// nothing of the checkout (which may sit in root's 0700 home) is read by them.
public final class PostgresCluster: @unchecked Sendable {
    /// The one cluster of this test process, started on first use.
    public static let shared: PostgresCluster = {
        do { return try PostgresCluster() } catch {
            fatalError("cannot start the test PostgreSQL cluster: \(error)")
        }
    }()

    public let host = "127.0.0.1"
    public let port: Int
    /// The superuser tests connect as.
    public let user = "offpeak_test"
    public let password: String
    /// The folder holding the data folder, the socket, the log and the password file.
    public let folder: URL
    let data: URL
    let bin: URL
    /// The addresses the server listens on (`listen_addresses`).
    private let listen: String
    private let stopped = Mutex(false)
    private let databases = Atomic<Int>(0)

    /// The cluster's `psql`.
    public var psqlBinary: URL { bin.appendingPathComponent("psql") }

    /// The environment that gives offpeak (and `psql`) the password: `PGPASSWORD`.
    public var environment: [String: String] { ["PGPASSWORD": password] }

    /// Starts a private cluster: for tests that stop or restart it.
    /// - Parameters:
    ///   - address: another address of this machine to listen on besides 127.0.0.1 (a veth end).
    ///   - clients: the network (`10.213.0.0/16`) whose clients may log in over it with the password.
    public init(alsoListeningOn address: String? = nil, clients: String? = nil) throws {
        listen = (["127.0.0.1"] + (address.map { [$0] } ?? [])).joined(separator: ",")
        bin = try Self.binaries()
        password = "pw-" + UUID().uuidString.lowercased()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "offpeak-pg-\(UUID().uuidString)", isDirectory: true)
        data = folder.appendingPathComponent("data", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        chmod(folder.path, 0o700)
        let passwordFile = folder.appendingPathComponent("password")
        try Data(password.utf8).write(to: passwordFile)
        if OtherUser.isRoot {
            for url in [folder, passwordFile] { chown(url.path, OtherUser.nobody, OtherUser.nobody) }
        }
        do {
            try Self.initdb(bin, folder, user: user, passwordFile: passwordFile)
            if let clients {
                let hba = data.appendingPathComponent("pg_hba.conf")
                let handle = try FileHandle(forWritingTo: hba)
                defer { try? handle.close() }
                try handle.seekToEnd()
                try handle.write(contentsOf: Data("host all all \(clients) scram-sha-256\n".utf8))
            }
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
        var lastError: (any Error)?
        for _ in 0..<5 {
            let port = try Self.freePort()
            do {
                try Self.start(bin, folder, port: port, listen: listen)
                self.port = port
                Self.running.withLock { $0[data.path] = bin.path }
                return
            } catch {
                lastError = error
            }
        }
        try? FileManager.default.removeItem(at: folder)
        throw lastError ?? ClusterError.failed("no free port")
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: folder)
    }

    /// A new, empty database; its URL without the password (which `environment` gives).
    public func makeDatabase() throws -> String {
        let name = "test_\(databases.wrappingAdd(1, ordering: .relaxed).newValue)"
        _ = try psql("CREATE DATABASE \(name)", database: "postgres")
        return url(database: name)
    }

    /// The URL of `database`, without the password.
    public func url(database: String) -> String {
        "postgresql://\(user)@\(host):\(port)/\(database)?sslmode=disable"
    }

    /// Runs `sql` with `psql` over TCP as the superuser; its unaligned, tuples-only output.
    @discardableResult
    public func psql(_ sql: String, database: String, applicationName: String = "psql") throws -> String {
        let arguments = [
            bin.appendingPathComponent("psql").path, "-h", host, "-p", String(port), "-U", user, "-d",
            database,
            "-v", "ON_ERROR_STOP=1", "-AtX", "-c", sql,
        ]
        let environment = ["PGPASSWORD": password, "PGAPPNAME": applicationName, "PGCONNECT_TIMEOUT": "10"]
        let (status, output) = try Self.spawn(arguments, environment: environment, in: folder)
        guard status == 0 else { throw ClusterError.failed("psql: \(output)") }
        return output.trimmingCharacters(in: .newlines)
    }

    /// Stops the server at once, as a crash would (`pg_ctl stop -m immediate`); the folder stays
    /// until the cluster is released.
    public func stop() {
        let wasStopped = stopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        guard !wasStopped else { return }
        _ = try? Self.run(bin, folder, "pg_ctl", ["stop", "-D", data.path, "-m", "immediate", "-w"])
        _ = Self.running.withLock { $0.removeValue(forKey: data.path) }
    }

    /// Starts the stopped server again on its port.
    public func restart() throws {
        try Self.start(bin, folder, port: port, listen: listen)
        stopped.withLock { $0 = false }
        Self.running.withLock { $0[data.path] = bin.path }
    }

    /// `initdb` with a password-authenticated superuser: scram-sha-256 on host lines, so a wrong
    /// password is refused as on a real server; trust on the socket, which only this folder holds.
    private static func initdb(_ bin: URL, _ folder: URL, user: String, passwordFile: URL) throws {
        let data = folder.appendingPathComponent("data", isDirectory: true)
        try run(
            bin, folder, "initdb",
            [
                "-D", data.path, "-U", user, "--pwfile", passwordFile.path, "--auth-host=scram-sha-256",
                "--auth-local=trust", "-E", "UTF8", "--locale=C", "--no-sync",
            ])
    }

    private static func start(_ bin: URL, _ folder: URL, port: Int, listen: String) throws {
        let options = [
            "-p \(port)", "-c listen_addresses=\(listen)", "-k \(folder.path)", "-c fsync=off",
            "-c synchronous_commit=off", "-c full_page_writes=off", "-c max_connections=200",
        ]
        try run(
            bin, folder, "pg_ctl",
            [
                "start", "-D", folder.appendingPathComponent("data").path, "-w", "-t", "60", "-l",
                folder.appendingPathComponent("log").path,
                "-o", options.joined(separator: " "),
            ])
    }

    /// Runs one of the cluster's programs: as `nobody` when this process is root.
    @discardableResult
    private static func run(
        _ bin: URL, _ folder: URL, _ program: String, _ arguments: [String]
    ) throws -> String {
        let executable = bin.appendingPathComponent(program).path
        let user =
            OtherUser.isRoot
            ? ["setpriv", "--reuid=\(OtherUser.nobody)", "--regid=\(OtherUser.nobody)", "--clear-groups"] : []
        let (status, output) = try spawn(
            user + [executable] + arguments, environment: ["LC_ALL": "C", "HOME": folder.path], in: folder)
        guard status == 0 else {
            let log = (try? String(contentsOf: folder.appendingPathComponent("log"), encoding: .utf8)) ?? ""
            throw ClusterError.failed("\(program) exited with \(status): \(output)\n\(log.suffix(2000))")
        }
        return output
    }

    /// Runs `arguments` (through `env -C folder`) to its end with posix_spawn and waitpid, its
    /// output in a file, no other descriptor of this process open in it. Not `Process`: `pg_ctl start` leaves a daemon behind, and Foundation's child
    /// watching was seen to leave `pg_ctl` unreaped (a zombie) and wait for it forever.
    static func spawn(
        _ arguments: [String], environment: [String: String], in folder: URL
    ) throws -> (status: Int32, output: String) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("offpeak-pg-out-\(UUID())")
        defer { try? FileManager.default.removeItem(at: output) }
        var merged = ProcessInfo.processInfo.environment
        for name in ["PGDATA", "PGPORT", "PGHOST", "PGUSER", "PGDATABASE", "PGPASSFILE", "PGSERVICE"] {
            merged[name] = nil
        }
        for (name, value) in environment { merged[name] = value }
        let argv = ["/usr/bin/env", "-C", folder.path] + arguments
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of this process goes with it: `pg_ctl start` leaves the server running, and a
        // descriptor it inherited (another test's half-written copy of a binary) would stay open in
        // it for good, and exec of that file would fail with ETXTBSY.
        guard closeFrom(&actions, 3) == 0 else {
            throw ClusterError.failed("posix_spawn_file_actions_addclosefrom_np")
        }
        var pid = pid_t()
        let cArguments = argv.map { strdup($0) } + [nil]
        let cEnvironment = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in cArguments + cEnvironment { free(pointer) } }
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, cArguments, cEnvironment)
        guard spawned == 0 else { throw ClusterError.failed("cannot run \(arguments[0]): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        let exited = status & 0x7f == 0
        return (exited ? (status >> 8) & 0xff : 128 + (status & 0x7f), text)
    }

    public enum ClusterError: Error, CustomStringConvertible {
        case failed(String)
        case noPostgreSQL

        public var description: String {
            switch self {
            case .failed(let text): text
            case .noPostgreSQL:
                "no PostgreSQL server programs under /usr/lib/postgresql/*/bin (install Debian's postgresql)"
            }
        }
    }

    /// The newest `/usr/lib/postgresql/VERSION/bin` with `initdb`, `pg_ctl` and `postgres`.
    static func binaries() throws -> URL {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql", isDirectory: true)
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        let usable = versions.compactMap { version -> (Int, URL)? in
            guard let number = Int(version.prefix { $0.isNumber }) else { return nil }
            let bin = root.appendingPathComponent(version).appendingPathComponent("bin")
            let complete = ["initdb", "pg_ctl", "postgres", "psql"].allSatisfy {
                FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent($0).path)
            }
            return complete ? (number, bin) : nil
        }
        guard let newest = usable.max(by: { $0.0 < $1.0 }) else { throw ClusterError.noPostgreSQL }
        return newest.1
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34), which its Swift module does not show.
    private static let closeFrom:
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32 = {
            guard
                let symbol = dlsym(
                    UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
            else { fatalError("glibc 2.34 or later is needed (posix_spawn_file_actions_addclosefrom_np)") }
            return unsafeBitCast(
                symbol,
                to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
        }()

    /// A port of 127.0.0.1 nothing listens on now (the kernel's pick for port 0).
    static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw ClusterError.failed("socket: errno \(errno)") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(socket, address, length) == 0 && getsockname(socket, address, &length) == 0
            }
        }
        guard bound else { throw ClusterError.failed("bind: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Data folders of servers still running, by the `bin` folder that stops them: stopped at exit.
    private static let running: Mutex<[String: String]> = {
        atexit {
            let servers = PostgresCluster.running.withLock { $0 }
            for (data, bin) in servers {
                let user =
                    getuid() == 0
                    ? [
                        "setpriv", "--reuid=\(OtherUser.nobody)", "--regid=\(OtherUser.nobody)",
                        "--clear-groups",
                    ]
                    : []
                let folder = URL(fileURLWithPath: data).deletingLastPathComponent()
                _ = try? PostgresCluster.spawn(
                    user + ["\(bin)/pg_ctl", "stop", "-D", data, "-m", "immediate", "-w"], environment: [:],
                    in: folder)
                try? FileManager.default.removeItem(at: folder)
            }
        }
        return Mutex([:])
    }()
}
