import Foundation
import Testing

@testable import Offpeak

extension Store {
    /// The SQLite engine behind this store, for tests that look at its rows; a store on another
    /// engine fails the test that asks.
    var sqlite: SQLiteStore {
        get throws {
            guard case .sqlite(let engine) = engine else {
                throw OffpeakError(
                    .software, "this test reads the SQLite engine's rows; the store is not on SQLite")
            }
            return engine
        }
    }
}
