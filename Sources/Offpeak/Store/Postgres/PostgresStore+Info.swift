import Foundation
import PostgresNIO

extension PostgresStore {
    /// The store's facts for `offpeak store info`: its schema version, `pg_database_size`, the
    /// server's version, and the other offpeak connections (application name starting with
    /// `offpeak`, this one left out), oldest first.
    func info() throws(OffpeakError) -> StoreInfo {
        let schema = try PostgresMigrations.version(of: self) ?? 0
        guard
            let row = try query(
                "SELECT pg_database_size(current_database()), current_setting('server_version')"
            ).first
        else { throw OffpeakError(.ioError, "PostgreSQL at \(url.endpoint) did not answer its size") }
        let (size, version) = try decode(row, as: (Int, String).self)
        let rows = try query(
            """
            SELECT pid, host(client_addr), application_name, backend_start, state FROM pg_stat_activity
            WHERE application_name LIKE 'offpeak%' AND pid <> pg_backend_pid() AND datname = current_database()
            ORDER BY backend_start, pid
            """)
        var connections: [StoreInfo.Connection] = []
        for row in rows {
            let (pid, address, name, start, state) = try decode(
                row, as: (Int, String?, String, Date, String?).self)
            connections.append(
                StoreInfo.Connection(
                    pid: pid, clientAddress: address, applicationName: name, backendStart: start, state: state
                ))
        }
        return StoreInfo(
            engine: .postgresql, location: url.description, schemaVersion: schema,
            knownSchemaVersion: PostgresMigrations.latest, sizeBytes: size, serverVersion: version,
            connections: connections)
    }
}
