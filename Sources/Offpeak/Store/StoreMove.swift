import Foundation

/// A store `offpeak store copy` has copied elsewhere (issue 46, item 2): marked moved in the
/// copy's own transaction on it, which held every writer off from the first row read to the
/// mark, so work is either in the copy or refused, never in neither.
///
/// The mark is a table, `offpeak_moved`, holding the sentence below, and a trigger on each of the
/// store's tables that refuses any write with that sentence: a `run`, `submit` or `tick` opening
/// the store is refused before it writes (`Store.open`), and one that was already writing when the
/// copy began is refused at its next write, its transaction undone whole. Readers (`status`,
/// `costs`, another copy) still read it.
enum StoreMove {
    /// The table that holds the sentence in a moved store.
    static let table = "offpeak_moved"

    /// The tables whose writes are refused: every table of the store a command writes.
    static var guardedTables: [String] {
        StoreCopy.tables + StoreCopy.counterTables + ["limit_grants", "claims", "probe_claims"]
    }

    /// What a write to the moved store is told: where the store went, and how to follow it.
    static func sentence(to setting: String, at date: Date) -> String {
        let use =
            setting == "sqlite"
            ? "remove store: from offpeak.yaml (or write store: sqlite) and unset OFFPEAK_STORE"
            : "store: \(setting) in offpeak.yaml, or OFFPEAK_STORE=\(setting)"
        return "\(prefix)\(setting) by `offpeak store copy` at \(StoredDateText.string(date)) UTC; "
            + "nothing is written here any more: to use it, \(use)"
    }

    /// How every sentence begins, by which an engine's error is known for what it is.
    static let prefix = "this store was moved to "

    /// The error a write to a moved store ends in: the store to use is a setting to change.
    static func error(_ sentence: String) -> OffpeakError {
        OffpeakError(.configuration, sentence)
    }

    /// `text` as an SQL string literal, for a sentence written into a trigger's body.
    static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
