import OffpeakTestSupport
import Testing

extension Trait where Self == ConditionTrait {
    /// A test of the SQLite engine's rows or file: skipped on the suite's PostgreSQL pass
    /// (`TestStore`).
    static var sqliteOnly: Self {
        .enabled(if: !TestStore.onPostgres, Comment(rawValue: TestStore.sqliteOnlyReason))
    }
}
