import Foundation
import GRDB
import Testing

@testable import Offpeak

/// The one list of schema versions (`SchemaChange`) both engines follow: each makes every change,
/// in the list's order, its versions numbered without a gap, as its stores already hold them.
struct SchemaChangeTests {
    /// The SQLite versions that make `change`, by their numbers (`v14: ...` is 14).
    static func sqliteVersions(_ change: SchemaChange) -> [Int] {
        var migrator = DatabaseMigrator()
        StoreMigrations.register(change, in: &migrator)
        return migrator.migrations.map { name in
            Int(name.dropFirst().prefix { $0 != ":" }) ?? -1
        }
    }

    @Test func everyChangeIsMadeByBothEnginesInTheListsOrder() {
        var sqlite: [Int] = []
        var postgres: [Int] = []
        for change in SchemaChange.allCases {
            let mine = Self.sqliteVersions(change)
            let theirs = PostgresMigrations.versions(making: change).map(\.version)
            #expect(!mine.isEmpty && !theirs.isEmpty, "\(change) is made by both engines")
            sqlite += mine
            postgres += theirs
        }
        #expect(sqlite == Array(1...32), "SQLite's versions, registered in their order, as stores hold them")
        #expect(postgres == Array(1...PostgresMigrations.latest))
        #expect(PostgresMigrations.all.map(\.version) == postgres)
        #expect(StoreMigrations.migrator.migrations.count == sqlite.count)
    }

    @Test func eachSharedChangePairsTheVersionsThatMadeItOnEachEngine() {
        // Where the engines' histories met: each change's first version on each side.
        let pairs = SchemaChange.allCases.dropFirst().map { change in
            (
                Self.sqliteVersions(change).first ?? 0,
                PostgresMigrations.versions(making: change).first?.version ?? 0
            )
        }
        #expect(pairs.map(\.0) == [14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 26, 27, 28, 29, 30, 31, 32])
        #expect(pairs.map(\.1) == [6, 7, 8, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24])
    }
}
