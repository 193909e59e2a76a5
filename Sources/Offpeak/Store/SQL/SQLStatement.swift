import Foundation

/// A statement the store's rules write once for both engines: SQL that SQLite and PostgreSQL both
/// read, its values kept apart from the text (never spliced into it), each engine rendering the
/// placeholders its own way (`?`, `$1`).
///
///     let due: SQLStatement = "SELECT id FROM requests WHERE run_id = \(runID) AND state IN \(list: states)"
struct SQLStatement: Sendable, ExpressibleByStringInterpolation {
    enum Part: Sendable {
        case text(String)
        case value(SQLValue)
    }

    private(set) var parts: [Part]

    init(stringLiteral value: String) {
        parts = [.text(value)]
    }

    init(stringInterpolation: Interpolation) {
        parts = stringInterpolation.parts
    }

    struct Interpolation: StringInterpolationProtocol {
        fileprivate var parts: [Part] = []

        init(literalCapacity: Int, interpolationCount: Int) {
            parts.reserveCapacity(interpolationCount * 2 + 1)
        }

        mutating func appendLiteral(_ literal: String) {
            parts.append(.text(literal))
        }

        /// One value, as a placeholder.
        mutating func appendInterpolation(_ value: some SQLBindable) {
            parts.append(.value(value.sqlValue))
        }

        /// A value or NULL.
        mutating func appendInterpolation<Value: SQLBindable>(_ value: Value?) {
            parts.append(.value(value?.sqlValue ?? .null))
        }

        /// A parenthesized list for `IN`: one placeholder per value; an empty list is `(NULL)`,
        /// which nothing is in.
        mutating func appendInterpolation(list values: [some SQLBindable]) {
            guard !values.isEmpty else {
                parts.append(.text("(NULL)"))
                return
            }
            parts.append(.text("("))
            for (index, value) in values.enumerated() {
                if index > 0 { parts.append(.text(", ")) }
                parts.append(.value(value.sqlValue))
            }
            parts.append(.text(")"))
        }

        /// Text of offpeak's own (a column list, a constant), put in as it is.
        mutating func appendInterpolation(unescaped text: String) {
            parts.append(.text(text))
        }

        /// Another statement, its values with it.
        mutating func appendInterpolation(_ statement: SQLStatement) {
            parts += statement.parts
        }
    }

    /// Whether it holds no text and no value.
    var isEmpty: Bool {
        parts.allSatisfy { part in
            if case .text(let text) = part { return text.isEmpty }
            return false
        }
    }

    /// `statements` one after the other, `separator` between each two.
    static func joined(_ statements: [SQLStatement], separator: String) -> SQLStatement {
        var joined = SQLStatement(stringLiteral: "")
        for (index, statement) in statements.enumerated() {
            if index > 0 { joined.parts.append(.text(separator)) }
            joined.parts += statement.parts
        }
        return joined
    }

    /// The text, with `placeholder(n)` for the n-th value (counted from 1), and the values in order.
    func rendered(placeholder: (Int) -> String) -> (sql: String, values: [SQLValue]) {
        var sql = ""
        var values: [SQLValue] = []
        for part in parts {
            switch part {
            case .text(let text): sql += text
            case .value(let value):
                values.append(value)
                sql += placeholder(values.count)
            }
        }
        return (sql, values)
    }
}

/// A value a statement carries: what both engines bind.
enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int)
    case real(Double)
    case text(String)
    case blob(Data)
    /// SQLite keeps it as text in UTC ("yyyy-MM-dd HH:mm:ss.SSS", which sorts as time does),
    /// PostgreSQL as `timestamptz`.
    case date(Date)
    /// SQLite keeps it as 0 or 1, PostgreSQL as `boolean`.
    case bool(Bool)
}

/// A Swift value a statement can carry.
protocol SQLBindable {
    var sqlValue: SQLValue { get }
}

extension String: SQLBindable {
    var sqlValue: SQLValue { .text(self) }
}

extension Int: SQLBindable {
    var sqlValue: SQLValue { .integer(self) }
}

extension Double: SQLBindable {
    var sqlValue: SQLValue { .real(self) }
}

extension Bool: SQLBindable {
    var sqlValue: SQLValue { .bool(self) }
}

extension Date: SQLBindable {
    var sqlValue: SQLValue { .date(self) }
}

extension Data: SQLBindable {
    var sqlValue: SQLValue { .blob(self) }
}
