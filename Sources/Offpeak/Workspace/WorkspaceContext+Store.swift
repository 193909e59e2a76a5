import Foundation

extension WorkspaceContext {
    /// The store this workspace uses: `OFFPEAK_STORE` when set, else offpeak.yaml's `store:`.
    func storeLocation() throws(OffpeakError) -> StoreLocation {
        try StoreLocation.resolve(configured: config.store, environment: environment)
    }

    /// `offpeak store info`: the store opened as a reporting command opens it (a PostgreSQL store's
    /// schema brought up to date under its advisory lock, as the SQLite store's is), then described.
    public func storeInfo() throws(OffpeakError) -> StoreInfo {
        switch try storeLocation() {
        case .sqlite:
            return try openStoreForReading().info()
        case .postgres(let url):
            return try StoreInfo.postgres(url, environment: environment, logger: logger)
        }
    }
}
