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

    /// The workspace as an in-process command sees it, `extra` added to its environment.
    func context(_ extra: [String: String] = [:]) throws -> WorkspaceContext {
        try WorkspaceContext(
            workspace: Workspace(root: root), environment: try environment(extra),
            logger: Logger(label: "test"))
    }

    /// Runs the workspace's job `job` in this process, as `offpeak run JOB` does.
    func run(job: String, environment extra: [String: String] = [:]) throws -> RunOutcome {
        let context = try context(extra)
        return try context.run(try context.loadJob(job))
    }
}
