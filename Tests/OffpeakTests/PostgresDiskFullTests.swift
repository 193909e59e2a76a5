import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

#if canImport(Glibc)
import Glibc
#endif

/// A PostgreSQL server out of disk: its `requests` table moved to a tablespace on a 1 MB tmpfs, a
/// run's insert fills it. Mounting needs root, as CI runs the tests.
@Suite(.ownThreads, .serialized, .enabled(if: OtherUser.isRoot, "mounting a small tmpfs needs root"))
struct PostgresDiskFullTests {
    @Test func aFullDiskIsTemporaryLeavesNothingHalfWrittenAndTheWriteGoesThroughOnceThereIsRoom() throws {
        let cluster = PostgresCluster.shared
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "offpeak-tiny-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        let mount = try CommandResult.run(
            URL(fileURLWithPath: "/bin/mount"),
            ["-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", folder.path])
        try #require(mount.status == 0, "mount: \(mount.stderr)")
        defer { _ = try? CommandResult.run(URL(fileURLWithPath: "/bin/umount"), ["-l", folder.path]) }
        chown(folder.path, OtherUser.nobody, OtherUser.nobody)

        let store = try PostgresStoreTests.connect()
        defer { store.close() }
        try PostgresMigrations.migrate(store)
        let engine = PostgresEngine(store)
        let database = store.url.database
        let tablespace = "tiny_\(UUID().uuidString.prefix(8).lowercased())"
        try cluster.psql("CREATE TABLESPACE \(tablespace) LOCATION '\(folder.path)'", database: database)
        try cluster.psql("ALTER TABLE requests SET TABLESPACE \(tablespace)", database: database)

        // Payloads that do not compress: 600 of 8 KB is past the tablespace's 1 MB.
        let run = RoleFixtures.run("full", job: "j")
        let requests = (0..<600).map { index in
            RoleFixtures.request(
                "i\(index)", run: run.id, position: index,
                payload: (0..<230).map { _ in UUID().uuidString }.joined())
        }
        var failure: OffpeakError?
        do { try engine.insert(run: run, requests: requests) } catch { failure = error }
        let error = try #require(failure)
        #expect(error.status == .temporaryFailure)
        #expect(error.description.hasPrefix("PostgreSQL at 127.0.0.1:\(cluster.port) is out of disk space"))
        #expect(!error.description.contains(cluster.password))
        #expect(try engine.run(id: run.id) == nil, "the run and its requests commit together or not at all")
        #expect(try cluster.psql("SELECT count(*) FROM requests", database: database) == "0")

        // Room again (the table back on the server's disk): the same write goes through whole.
        try cluster.psql("ALTER TABLE requests SET TABLESPACE pg_default", database: database)
        try engine.insert(run: run, requests: requests)
        #expect(try engine.requests(runID: run.id).count == 600)
        try cluster.psql("DROP TABLESPACE \(tablespace)", database: database)
    }
}
