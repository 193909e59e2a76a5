import GRDB

extension StoreMigrations {
    /// The refusal of a store written by a newer offpeak, or nil when this one knows every migration
    /// the store has: an older offpeak must not write rows a newer schema reads differently, nor
    /// read them as if it knew them. The store's version is how many migrations it has applied, as
    /// `offpeak store info` counts it.
    static func newer(_ db: Database, path: String) throws -> OffpeakError? {
        let applied = try migrator.appliedIdentifiers(db)
        let known = Set(migrator.migrations)
        guard !applied.isSubset(of: known) else { return nil }
        return OffpeakError(
            .configuration,
            "the SQLite store at \(path) has schema version \(applied.count), newer than this offpeak "
                + "knows (\(known.count)); upgrade offpeak")
    }
}
