import Foundation
import GRDB
import Logging

/// What `offpeak store info` says of a store: which engine, where, its schema version and size,
/// and for PostgreSQL the server's version and the other offpeak connections to it.
public struct StoreInfo: Sendable, Equatable {
    public enum Engine: String, Sendable, Encodable {
        case sqlite
        case postgresql
    }

    var engine: Engine
    /// The SQLite file's path, or the PostgreSQL URL without its password.
    var location: String
    var schemaVersion: Int
    /// The latest version this offpeak knows.
    var knownSchemaVersion: Int
    /// SQLite: its pages (`page_count` × `page_size`); PostgreSQL: `pg_database_size`.
    var sizeBytes: Int
    /// PostgreSQL's `server_version`.
    var serverVersion: String?
    /// PostgreSQL: the other connections whose application name starts with `offpeak`.
    var connections: [Connection]?

    /// One other offpeak connection, from `pg_stat_activity`.
    struct Connection: Sendable, Equatable {
        var pid: Int
        /// The client's address; `nil` for a unix socket.
        var clientAddress: String?
        var applicationName: String
        var backendStart: Date
        /// `active`, `idle`, `idle in transaction`…; `nil` when the server does not say.
        var state: String?
    }
}

// The SQLite side; the PostgreSQL side is `PostgresStore+Info`.
extension StoreInfo {
    /// The SQLite store's facts, read in one snapshot: the migrations GRDB has applied, and the
    /// database's size as its pages (`page_count` × `page_size`), which counts what the `-wal` holds
    /// and is what the file measures once checkpointed. The files' own sizes are not read: opening
    /// the store appends to the `-wal` and closing it folds the `-wal` back, so they change under
    /// any command that looks.
    static func sqlite(_ store: SQLiteStore) throws(OffpeakError) -> StoreInfo {
        let (applied, size) = try store.read { db in
            let applied = try StoreMigrations.migrator.appliedIdentifiers(db).count
            let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
            let pageSize = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0
            return (applied, pages * pageSize)
        }
        return StoreInfo(
            engine: .sqlite, location: store.url.path, schemaVersion: applied,
            knownSchemaVersion: StoreMigrations.migrator.migrations.count, sizeBytes: size)
    }
}

extension Store {
    /// Which store this is, its schema version and size (`offpeak store info`).
    func info() throws(OffpeakError) -> StoreInfo {
        switch engine {
        case .sqlite(let store): try StoreInfo.sqlite(store)
        case .postgres(let engine): try engine.store.info()
        }
    }
}
