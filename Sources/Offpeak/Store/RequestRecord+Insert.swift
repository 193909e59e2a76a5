import Foundation
import GRDB

/// Inserting submitted requests a chunk at a time, through one prepared statement.
///
/// `offpeak submit` writes thousands of rows a second; GRDB's `Codable` insert encodes each one
/// through a keyed container and converts every property's name to its snake_case column, and a
/// query per line asked whether the run already had the item. Here each row binds its values in
/// the statement's column order, and `ON CONFLICT (run_id, item_id) DO NOTHING` answers that
/// question with the insert itself (the unique key holds the run's item ids).
extension RequestRecord {
    static let insertSQL = """
        INSERT INTO requests (id, run_id, job, item_id, position, source, client_id, tier, payload, cache_key,
            state, attempts, next_attempt_at, error, created_at, updated_at, cache_policy)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (run_id, item_id) DO NOTHING
        """

    /// The statement `insert(with:_:)` takes, prepared once per transaction's connection.
    static func insertStatement(_ db: Database) throws -> Statement {
        try db.cachedStatement(sql: insertSQL)
    }

    /// Inserts this request unless its run already has its item.
    /// - Returns: whether the row was added (false: the run already holds the item).
    /// - Throws: as `StoredRecord.willSave` does for a date the store could not read back.
    func insert(with statement: Statement, _ db: Database) throws -> Bool {
        if !(StoredDate.isStorable(createdAt) && StoredDate.isStorable(updatedAt)
            && nextAttemptAt.map(StoredDate.isStorable) != false)
        {
            try StoredDate.check(self)
        }
        try statement.execute(arguments: [
            id, runId, job, itemId, position, source.rawValue, clientId, tier, payload, cacheKey,
            state.rawValue, attempts, nextAttemptAt, error, createdAt, updatedAt, cachePolicy.rawValue,
        ])
        return db.changesCount > 0
    }
}
