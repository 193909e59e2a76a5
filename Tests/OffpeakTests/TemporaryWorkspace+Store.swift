import Foundation
import Logging
import OffpeakTestSupport

@testable import Offpeak

extension TemporaryWorkspace {
    /// The store the commands run in this workspace use (`TestStore`: its SQLite file, or its
    /// database on the test cluster), opened as a command that writes opens it.
    func openStore() throws -> Store {
        let environment = try storeEnvironment()
        return try Store.open(
            Store.Opening(
                workspace: Workspace(root: root),
                location: try StoreLocation.resolve(configured: .sqlite, environment: environment),
                environment: environment, logger: Logger(label: "test")))
    }

    /// `extra` and what points an in-process command at this workspace's store.
    func environment(_ extra: [String: String] = [:]) throws -> [String: String] {
        extra.merging(try storeEnvironment()) { mine, _ in mine }
    }
}
