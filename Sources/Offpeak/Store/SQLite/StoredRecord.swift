import GRDB

/// A struct stored in one table, its properties mapped to snake_case columns.
protocol StoredRecord: Codable, FetchableRecord, MutablePersistableRecord, Sendable {}

extension StoredRecord {
    public static var databaseColumnDecodingStrategy: DatabaseColumnDecodingStrategy { .convertFromSnakeCase }
    public static var databaseColumnEncodingStrategy: DatabaseColumnEncodingStrategy { .convertToSnakeCase }

    /// Before every insert, update or upsert: a date the store could not read back is refused
    /// (`StoredDate`), so one value never makes its row, and every command that lists it, unreadable.
    public func willSave(_ db: Database) throws {
        try StoredDate.check(self)
    }
}

// The public records are plain structs above the seam; their rows are the SQLite engine's business.
extension RequestRecord: StoredRecord, PersistableRecord {
    public static let databaseTableName = "requests"
}

extension RunRecord: StoredRecord, PersistableRecord {
    public static let databaseTableName = "runs"
}
