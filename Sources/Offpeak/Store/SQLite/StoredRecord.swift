import Foundation
import GRDB
import Synchronization

/// A struct stored in one table, its properties mapped to snake_case columns.
protocol StoredRecord: Codable, FetchableRecord, MutablePersistableRecord, Sendable {}

extension StoredRecord {
    public static var databaseColumnDecodingStrategy: DatabaseColumnDecodingStrategy {
        .custom(ColumnNames.key(forColumn:))
    }
    public static var databaseColumnEncodingStrategy: DatabaseColumnEncodingStrategy {
        .custom(ColumnNames.column(forKey:))
    }
    /// GRDB's text for a date, written by hand (`StoredDateText`): its own is a `DateFormatter`.
    public static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy {
        .custom { StoredDateText.string($0) }
    }

    /// Before every insert, update or upsert: a date the store could not read back is refused
    /// (`StoredDate`), so one value never makes its row, and every command that lists it, unreadable.
    public func willSave(_ db: Database) throws {
        try StoredDate.check(self)
    }
}

/// GRDB's snake_case conversions, each name converted once: GRDB converts every column of every
/// row it reads or writes, which was about 6 % of a run's CPU on SQLite.
enum ColumnNames {
    private static let columns = Mutex<[String: String]>([:])
    private static let keys = Mutex<[String: String]>([:])

    /// `requestId` → `request_id`.
    static func column(forKey key: any CodingKey) -> String {
        let name = key.stringValue
        if let column = columns.withLock({ $0[name] }) { return column }
        let column = snakeCase(name)
        columns.withLock { $0[name] = column }
        return column
    }

    /// `request_id` → `requestId`.
    static func key(forColumn column: String) -> any CodingKey {
        if let key = keys.withLock({ $0[column] }) { return Name(key) }
        let key = camelCase(column)
        keys.withLock { $0[column] = key }
        return Name(key)
    }

    /// Foundation's `convertToSnakeCase`, which GRDB copies: a word ends before a capital that
    /// follows a lower-case letter, and a run of capitals is a word of its own (`sourceURLText` →
    /// `source_url_text`); the words lower-cased, joined by underscores.
    static func snakeCase(_ key: String) -> String {
        let characters = Array(key)
        var words: [String] = []
        var word = ""
        for (index, character) in characters.enumerated() {
            let next = index + 1 < characters.count ? characters[index + 1] : nil
            let previous = index > 0 ? characters[index - 1] : nil
            if character.isUppercase, let previous, !word.isEmpty,
                !previous.isUppercase || next?.isLowercase == true
            {
                words.append(word)
                word = ""
            }
            word.append(character)
        }
        if !word.isEmpty { words.append(word) }
        return words.map { $0.lowercased() }.joined(separator: "_")
    }

    /// Foundation's `convertFromSnakeCase`, which GRDB copies: the words after the first
    /// capitalized, underscores at either end kept.
    static func camelCase(_ column: String) -> String {
        guard let first = column.firstIndex(where: { $0 != "_" }),
            let last = column.lastIndex(where: { $0 != "_" })
        else { return column }
        let words = column[first...last].split(separator: "_")
        guard words.count > 1 else { return column }
        let joined = ([String(words[0])] + words.dropFirst().map { $0.capitalized }).joined()
        return String(column[..<first]) + joined + String(column[column.index(after: last)...])
    }

    private struct Name: CodingKey {
        let stringValue: String
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }
}

// The public records are plain structs above the seam; their rows are the SQLite engine's business.
extension RequestRecord: StoredRecord, PersistableRecord {
    public static let databaseTableName = "requests"
}

extension RunRecord: StoredRecord, PersistableRecord {
    public static let databaseTableName = "runs"
}
