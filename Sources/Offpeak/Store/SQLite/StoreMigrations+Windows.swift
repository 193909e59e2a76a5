import GRDB

extension StoreMigrations {
    /// v31 (issue 48): the price window, waiting's savings and the tags of each call
    /// (`LedgerWindowsSchema`); `PostgresSchema.version23` is the same.
    static func markWindowsAndTags(_ db: Database) throws {
        for statement in LedgerWindowsSchema.statements(postgres: false) { try db.execute(sql: statement) }
    }
}
