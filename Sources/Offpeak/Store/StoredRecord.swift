import GRDB

/// A struct stored in one table, its properties mapped to snake_case columns.
public protocol StoredRecord: Codable, FetchableRecord, MutablePersistableRecord, Sendable {}

extension StoredRecord {
    public static var databaseColumnDecodingStrategy: DatabaseColumnDecodingStrategy { .convertFromSnakeCase }
    public static var databaseColumnEncodingStrategy: DatabaseColumnEncodingStrategy { .convertToSnakeCase }
}
