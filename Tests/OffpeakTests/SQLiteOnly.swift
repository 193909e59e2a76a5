import OffpeakTestSupport
import Testing

extension Trait where Self == ConditionTrait {
    /// A test of the SQLite engine itself (its file, its migrations, what GRDB reads back): skipped
    /// on the suite's PostgreSQL pass (`TestStore`).
    static var sqliteOnly: Self {
        .enabled(if: !TestStore.onPostgres, Comment(rawValue: TestStore.sqliteOnlyReason))
    }
}
