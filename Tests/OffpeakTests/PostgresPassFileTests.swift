import Foundation
import Logging
import Testing

@testable import Offpeak

/// `~/.pgpass` with libpq's rules.
struct PostgresPassFileTests {
    let url = PostgresURL(user: "bob", host: "db.example.org", port: 5433, database: "ledger")

    @Test func theFirstMatchingLineWins() {
        let text = """
            # a comment:*:*:*:nope
            other.host:5433:ledger:bob:wrong-host
            db.example.org:5432:ledger:bob:wrong-port
            db.example.org:5433:ledger:bob:right
            *:*:*:*:fallback
            """
        #expect(PostgresPassFile.password(in: text, for: url)?.revealed == "right")
    }

    @Test func wildcardsMatchAnything() {
        #expect(PostgresPassFile.password(in: "*:*:*:bob:any", for: url)?.revealed == "any")
        #expect(PostgresPassFile.password(in: "db.example.org:*:*:*:host", for: url)?.revealed == "host")
        #expect(PostgresPassFile.password(in: "*:*:*:carol:theirs", for: url) == nil)
        // An escaped star is a star, not a wildcard.
        #expect(PostgresPassFile.password(in: "\\*:*:*:*:literal", for: url) == nil)
    }

    @Test func escapesColonsAndBackslashes() {
        let line = "db.example.org:5433:ledger:bob:pa\\:ss\\\\word:ignored"
        #expect(PostgresPassFile.password(in: line, for: url)?.revealed == "pa:ss\\word")
        var odd = url
        odd.database = "a:b"
        #expect(PostgresPassFile.password(in: "*:*:a\\:b:*:colon-db", for: odd)?.revealed == "colon-db")
        #expect(
            PostgresPassFile.password(in: "*:*:*:*", for: url) == nil, "a line of four fields has no password"
        )
        #expect(PostgresPassFile.password(in: "*:*:*:*:crlf\r\n", for: url)?.revealed == "crlf")
    }

    @Test func readsTheFileOnlyWhenOnlyItsOwnerCan() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offpeak-pgpass-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("pgpass")
        try Data("*:*:*:bob:from-file\n".utf8).write(to: file)
        let logs = LogCapture()
        let logger = Logger(label: "test") { _ in logs }
        chmod(file.path, 0o600)
        let environment = ["PGPASSFILE": file.path]
        #expect(
            PostgresPassFile.password(for: url, environment: environment, logger: logger)?.revealed
                == "from-file")
        #expect(logs.lines.isEmpty)
        chmod(file.path, 0o640)
        #expect(PostgresPassFile.password(for: url, environment: environment, logger: logger) == nil)
        #expect(
            logs.lines == [
                "password file \(file.path) has group or other access and is ignored; its permissions should be u=rw (0600) or less"
            ])
        // ~/.pgpass when PGPASSFILE is not set.
        try FileManager.default.moveItem(at: file, to: folder.appendingPathComponent(".pgpass"))
        chmod(folder.appendingPathComponent(".pgpass").path, 0o600)
        #expect(
            PostgresPassFile.password(for: url, environment: ["HOME": folder.path], logger: logger)?.revealed
                == "from-file")
        #expect(
            PostgresPassFile.password(for: url, environment: ["HOME": "/nonexistent"], logger: logger) == nil)
    }
}

/// A log handler that keeps the messages.
final class LogCapture: LogHandler, @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    var lines: [String] { lock.withLock { messages } }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lock.withLock { messages.append("\(event.message)") }
    }
}
