import Foundation

extension WorkspaceContext {
    /// The store this workspace uses: `OFFPEAK_STORE` when set, else offpeak.yaml's `store:`.
    func storeLocation() throws(OffpeakError) -> StoreLocation {
        try StoreLocation.resolve(configured: config.store, environment: environment)
    }

    /// Refuses a workspace whose store is PostgreSQL in a command that has no PostgreSQL side yet
    /// (issue 22 builds the store's roles on it): running it on the SQLite file instead would split
    /// the workspace's state between two stores without a word.
    func requireSQLiteStore() throws(OffpeakError) {
        guard case .postgres(let url) = try storeLocation() else { return }
        throw OffpeakError(
            .configuration,
            "the store is PostgreSQL (\(url.endpoint)), which only `offpeak store info` reads so far; "
                + "use store: sqlite (or unset \(StoreLocation.variable)) for this command")
    }

    /// `offpeak store info`: the store opened as a reporting command opens it (a PostgreSQL store's
    /// schema brought up to date under its advisory lock, as the SQLite store's is), then described.
    public func storeInfo() throws(OffpeakError) -> StoreInfo {
        switch try storeLocation() {
        case .sqlite:
            return try StoreInfo.sqlite(try openStoreForReading())
        case .postgres(let url):
            let store = try PostgresStore.connect(url, environment: environment, logger: logger)
            defer { store.close() }
            try PostgresMigrations.migrate(store)
            return try store.info()
        }
    }
}
