import Foundation
import Logging
import OffpeakTestSupport
import PostgresNIO
import Testing

@testable import Offpeak

#if canImport(Glibc)
import Glibc
#endif

/// Each fault of a PostgreSQL store is one line naming host:port, never the password, with the exit
/// status that says fix it (78) or wait (75), against a real server.
@Suite(.ownThreads, .serialized) struct PostgresFaultTests {
    /// The error `body` throws, checked to be one line without the password.
    func fault(
        _ cluster: PostgresCluster = .shared, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () throws(OffpeakError) -> Void
    ) -> OffpeakError? {
        do {
            try body()
            Issue.record("expected a fault", sourceLocation: sourceLocation)
            return nil
        } catch {
            #expect(!error.description.contains("\n"), sourceLocation: sourceLocation)
            #expect(!error.description.contains(cluster.password), sourceLocation: sourceLocation)
            #expect(!error.description.contains("pw-"), sourceLocation: sourceLocation)
            return error
        }
    }

    func connect(
        _ text: String, cluster: PostgresCluster = .shared, environment: [String: String]? = nil
    ) throws(OffpeakError) -> PostgresStore {
        let url: PostgresURL
        do { url = try PostgresURL.parse(text, defaultUser: "nobody") } catch {
            throw OffpeakError(.configuration, error.description)
        }
        return try PostgresStore.connect(
            url, environment: environment ?? PostgresStoreTests.environment(cluster),
            logger: PostgresStoreTests.logger)
    }

    /// Who the server says the connection is: a statement answered, not only a connect that did not throw.
    func currentUser(_ store: PostgresStore) throws(OffpeakError) -> String? {
        try store.query("SELECT current_user::text").first.map { row throws(OffpeakError) in
            try store.decode(row, as: String.self)
        }
    }

    @Test func aWrongPasswordIsConfiguration() throws {
        let cluster = PostgresCluster.shared
        let url = try cluster.makeDatabase()
        let endpoint = "127.0.0.1:\(cluster.port)"
        let wrong = "not-the-pw-\(UUID())"
        let error = fault { () throws(OffpeakError) in
            _ = try connect(url, environment: ["PGPASSWORD": wrong, "PGPASSFILE": "/nonexistent"])
        }
        #expect(error?.status == .configuration)
        #expect(
            error?.description
                == "PostgreSQL at \(endpoint) refused the password of user 'offpeak_test' "
                + "(from the URL, PGPASSWORD or PGPASSFILE/~/.pgpass)")
        #expect(error?.description.contains(wrong) == false)
        // In the URL it is refused the same way, and named nowhere.
        let inURL = url.replacingOccurrences(of: "offpeak_test@", with: "offpeak_test:\(wrong)@")
        let again = fault { () throws(OffpeakError) in _ = try connect(inURL, environment: [:]) }
        #expect(again?.description == error?.description)
        // A role that does not exist is refused as a wrong password is (the server does not say which).
        let noRole = url.replacingOccurrences(of: "offpeak_test@", with: "nobody_here@")
        let role = fault { () throws(OffpeakError) in _ = try connect(noRole) }
        #expect(role?.status == .configuration)
        #expect(
            role?.description.hasPrefix(
                "PostgreSQL at \(endpoint) refused the password of user 'nobody_here'") == true)
    }

    @Test func noPasswordAtAllIsConfiguration() throws {
        let cluster = PostgresCluster.shared
        let url = try cluster.makeDatabase()
        let error = fault { () throws(OffpeakError) in
            _ = try connect(url, environment: ["PGPASSFILE": "/nonexistent"])
        }
        #expect(error?.status == .configuration)
        #expect(
            error?.description
                == "PostgreSQL at 127.0.0.1:\(cluster.port) asks user 'offpeak_test' for a password and none was "
                + "given (in the URL, PGPASSWORD or PGPASSFILE/~/.pgpass)")
    }

    @Test func thePasswordFileIsUsed() throws {
        let cluster = PostgresCluster.shared
        let url = try cluster.makeDatabase()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("offpeak-pgpass-\(UUID())")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data("127.0.0.1:\(cluster.port):*:offpeak_test:\(cluster.password)\n".utf8).write(to: file)
        chmod(file.path, 0o600)
        let store = try connect(url, environment: ["PGPASSFILE": file.path])
        #expect(try currentUser(store) == "offpeak_test", "connected, as the file's user")
        store.close()
        // It is the file's password that is sent: a wrong one in it is refused, and named nowhere.
        let wrong = "not-the-pw-\(UUID())"
        try Data("127.0.0.1:\(cluster.port):*:offpeak_test:\(wrong)\n".utf8).write(to: file)
        let error = fault { () throws(OffpeakError) in
            _ = try connect(url, environment: ["PGPASSFILE": file.path])
        }
        #expect(error?.status == .configuration)
        #expect(
            error?.description
                == "PostgreSQL at 127.0.0.1:\(cluster.port) refused the password of user 'offpeak_test' "
                + "(from the URL, PGPASSWORD or PGPASSFILE/~/.pgpass)")
        #expect(error?.description.contains(wrong) == false)
    }

    @Test func aMissingDatabaseIsConfiguration() throws {
        let cluster = PostgresCluster.shared
        let error = fault { () throws(OffpeakError) in _ = try connect(cluster.url(database: "no_such_db")) }
        #expect(error?.status == .configuration)
        #expect(
            error?.description
                == "database 'no_such_db' does not exist on PostgreSQL at 127.0.0.1:\(cluster.port)")
    }

    @Test func tlsTheServerDoesNotOfferIsConfiguration() throws {
        let cluster = PostgresCluster.shared
        let url = try cluster.makeDatabase().replacingOccurrences(
            of: "sslmode=disable", with: "sslmode=require")
        let error = fault { () throws(OffpeakError) in _ = try connect(url) }
        #expect(error?.status == .configuration)
        #expect(
            error?.description
                == "PostgreSQL at 127.0.0.1:\(cluster.port) does not offer TLS, which sslmode=require requires"
        )
        // `prefer` falls back to plain TCP, as libpq does.
        let store = try connect(url.replacingOccurrences(of: "sslmode=require", with: "sslmode=prefer"))
        #expect(try currentUser(store) == "offpeak_test", "connected over plain TCP")
        store.close()
    }

    @Test func aServerThatIsDownIsTemporary() throws {
        let cluster = try PostgresCluster()
        let url = try cluster.makeDatabase()
        cluster.stop()
        let error = fault(cluster) { () throws(OffpeakError) in _ = try connect(url, cluster: cluster) }
        #expect(error?.status == .temporaryFailure)
        let database = String(url.split(separator: "/").last?.split(separator: "?").first ?? "")
        #expect(
            error?.description
                == "cannot reach PostgreSQL at 127.0.0.1:\(cluster.port) (database '\(database)') (Connection refused)"
        )
    }

    @Test func aConnectionLostOrTerminatedIsTemporaryAndTheStoreIsBackAfter() throws {
        let cluster = try PostgresCluster()
        let url = try cluster.makeDatabase()
        let endpoint = "127.0.0.1:\(cluster.port)"
        // An administrator ends the connection: 57P01.
        let first = try connect(url, cluster: cluster)
        defer { first.close() }
        try cluster.psql(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'offpeak'",
            database: "postgres")
        let terminated = fault(cluster) { () throws(OffpeakError) in try first.query("SELECT 1") }
        #expect(terminated?.status == .temporaryFailure)
        #expect(
            terminated?.description.hasPrefix("PostgreSQL at \(endpoint) is shutting down or starting up")
                == true
                || terminated?.description.hasPrefix("lost the connection to PostgreSQL at \(endpoint)")
                    == true,
            "\(terminated?.description ?? "")")
        // The server stops under a connection (a crash or restart).
        let second = try connect(url, cluster: cluster)
        defer { second.close() }
        cluster.stop()
        let lost = fault(cluster) { () throws(OffpeakError) in try second.query("SELECT 1") }
        #expect(lost?.status == .temporaryFailure)
        #expect(lost?.description.contains(endpoint) == true, "\(lost?.description ?? "")")
        // Back: a new connection works.
        try cluster.restart()
        let third = try connect(url, cluster: cluster)
        defer { third.close() }
        #expect(try currentUser(third) == "offpeak_test", "a statement answered on the new connection")
    }

    /// A server that takes the TCP connection and never answers: `connect_timeout` bounds the
    /// whole start-up, not only the TCP handshake.
    @Test func aServerThatNeverAnswersTimesOut() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(listener, address, length) == 0 && listen(listener, 8) == 0
                    && getsockname(listener, address, &length) == 0
            }
        }
        try #require(listening)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let started = Date()
        let error = fault { () throws(OffpeakError) in
            _ = try connect("postgresql://u@127.0.0.1:\(port)/d?sslmode=disable&connect_timeout=2")
        }
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(error?.status == .temporaryFailure)
        #expect(
            error?.description
                == "cannot reach PostgreSQL at 127.0.0.1:\(port) (database 'd') (no answer within 2 s)")
    }

    @Test func aStatementTimeoutIsTemporary() throws {
        let store = try PostgresStoreTests.connect()
        defer { store.close() }
        try store.query("SET statement_timeout = '50ms'")
        let error = fault { () throws(OffpeakError) in try store.query("SELECT pg_sleep(5)") }
        #expect(error?.status == .temporaryFailure)
        #expect(
            error?.description
                == "a statement on PostgreSQL at \(store.url.endpoint) was canceled (statement_timeout or a cancel "
                + "request) (canceling statement due to statement timeout)")
        // The connection goes on.
        #expect(try currentUser(store) == "offpeak_test", "a statement answered after the cancel")
    }

    @Test func aStatementErrorIsAStoreErrorNamingTheServer() throws {
        let store = try PostgresStoreTests.connect()
        defer { store.close() }
        let error = fault { () throws(OffpeakError) in try store.query("SELECT * FROM no_such_table") }
        #expect(error?.status == .ioError)
        #expect(
            error?.description
                == "PostgreSQL at \(store.url.endpoint) database '\(store.url.database)': relation \"no_such_table\" "
                + "does not exist (SQLSTATE 42P01)")
    }
}
