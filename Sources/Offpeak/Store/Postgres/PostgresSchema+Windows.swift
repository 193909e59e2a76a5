extension PostgresSchema {
    /// Version 23: the price window, waiting's savings and the tags of each call, as SQLite's v31
    /// (`LedgerWindowsSchema`).
    static let version23: [String] = LedgerWindowsSchema.statements(postgres: true)
}
