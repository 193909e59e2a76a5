import Foundation

/// What `offpeak store info` prints: which store, its schema version and size, and for PostgreSQL
/// the server and the other offpeak connections. `--json` has every key on both engines (`null`
/// where an engine has no such fact), so scripts read one shape.
public struct StoreInfoReport: Sendable, Encodable {
    let info: StoreInfo

    public init(_ info: StoreInfo) { self.info = info }

    public var text: String {
        var lines = [
            "store:          \(info.engine == .sqlite ? "SQLite" : "PostgreSQL") \(info.location)",
            "schema version: \(info.schemaVersion)",
            "size:           \(info.sizeBytes) bytes (\(ReportFormat.bytes(info.sizeBytes)))",
        ]
        if let version = info.serverVersion { lines.append("server version: \(version)") }
        guard let connections = info.connections else { return lines.joined(separator: "\n") + "\n" }
        let others = Plural.count(connections.count, "other offpeak connection")
        lines.append("connections:    \(others)")
        var text = lines.joined(separator: "\n") + "\n"
        if !connections.isEmpty {
            let table = TextTable(columns: ["PID", "CLIENT", "APPLICATION", "STARTED", "STATE"])
            for connection in connections {
                table.add([
                    String(connection.pid), connection.clientAddress ?? "local", connection.applicationName,
                    Timestamp.text(connection.backendStart), connection.state ?? "-",
                ])
            }
            text += table.render()
        }
        return text
    }

    enum CodingKeys: String, CodingKey {
        case engine, location, schemaVersion, knownSchemaVersion, sizeBytes, serverVersion, connections
    }

    enum ConnectionKeys: String, CodingKey {
        case pid, clientAddress, applicationName, backendStart, state
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(info.engine, forKey: .engine)
        try container.encode(info.location, forKey: .location)
        try container.encode(info.schemaVersion, forKey: .schemaVersion)
        try container.encode(info.knownSchemaVersion, forKey: .knownSchemaVersion)
        try container.encode(info.sizeBytes, forKey: .sizeBytes)
        try container.encode(info.serverVersion, forKey: .serverVersion)
        guard let connections = info.connections else {
            return try container.encodeNil(forKey: .connections)
        }
        var list = container.nestedUnkeyedContainer(forKey: .connections)
        for connection in connections {
            var item = list.nestedContainer(keyedBy: ConnectionKeys.self)
            try item.encode(connection.pid, forKey: .pid)
            try item.encode(connection.clientAddress, forKey: .clientAddress)
            try item.encode(connection.applicationName, forKey: .applicationName)
            try item.encode(connection.backendStart, forKey: .backendStart)
            try item.encode(connection.state, forKey: .state)
        }
    }
}
