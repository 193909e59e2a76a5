import Foundation
import NIOCore
import PostgresNIO

/// The PostgreSQL store as either end of a copy (`StoreCopy`): reads through a cursor in one
/// repeatable-read snapshot, writes in one transaction, and says what type each column has.
extension PostgresStore: StoreCopySource, StoreCopyTarget {
    var copyDescription: String { "the PostgreSQL store at \(url.endpoint) database '\(url.database)'" }

    func copyColumnNames(table: String) throws(OffpeakError) -> [String] {
        try copyColumns(table: table).map(\.name)
    }

    /// `table`'s columns in their order, typed as `StoreCopy` moves them.
    func copyColumns(table: String) throws(OffpeakError) -> [CopyColumn] {
        let rows = try query(
            """
            SELECT column_name::text, data_type::text FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name = \(table) ORDER BY ordinal_position
            """)
        guard !rows.isEmpty else {
            throw OffpeakError(.dataError, "\(copyDescription) has no table \(table); is it offpeak's?")
        }
        return try rows.map { row throws(OffpeakError) -> CopyColumn in
            let (name, type) = try decode(row, as: (String, String).self)
            guard let kind = Self.copyKinds[type] else {
                throw OffpeakError(
                    .dataError, "cannot copy \(table).\(name): its type \(type) is not one offpeak writes")
            }
            return CopyColumn(name: name, kind: kind)
        }
    }

    static let copyKinds: [String: CopyColumn.Kind] = [
        "text": .text, "bigint": .integer, "integer": .integer, "boolean": .boolean,
        "double precision": .real, "timestamp with time zone": .time, "bytea": .bytes,
    ]

    /// A repeatable-read transaction that first locks every table against writes (`EXCLUSIVE`
    /// lets readers in): its snapshot, taken after the lock, is the copy's, and every writer waits
    /// for its end, when the store is marked moved.
    func copySnapshot<T>(_ body: () throws(OffpeakError) -> T) throws(OffpeakError) -> T {
        try transaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ") { () throws(OffpeakError) -> T in
            try query(
                PostgresQuery(
                    unsafeSQL:
                        "LOCK TABLE \(StoreMove.guardedTables.joined(separator: ", ")) IN EXCLUSIVE MODE"))
            return try body()
        }
    }

    /// The SQLSTATE a moved store's triggers raise (class OP: offpeak's own).
    static let movedState = "OPM01"

    func copyMarkMoved(_ sentence: String) throws(OffpeakError) {
        try query(
            PostgresQuery(unsafeSQL: "CREATE TABLE IF NOT EXISTS \(StoreMove.table) (sentence text NOT NULL)")
        )
        try query(PostgresQuery(unsafeSQL: "DELETE FROM \(StoreMove.table)"))
        try query("INSERT INTO offpeak_moved (sentence) VALUES (\(sentence))")
        try query(
            PostgresQuery(
                unsafeSQL: """
                    CREATE OR REPLACE FUNCTION \(StoreMove.table)() RETURNS trigger LANGUAGE plpgsql AS $body$
                    DECLARE sentence text;
                    BEGIN
                        SELECT m.sentence INTO sentence FROM \(StoreMove.table) m LIMIT 1;
                        RAISE EXCEPTION USING ERRCODE = '\(Self.movedState)', MESSAGE = sentence;
                    END $body$
                    """))
        for table in StoreMove.guardedTables {
            try query(PostgresQuery(unsafeSQL: "DROP TRIGGER IF EXISTS \(StoreMove.table) ON \(table)"))
            try query(
                PostgresQuery(
                    unsafeSQL: """
                        CREATE TRIGGER \(StoreMove.table) BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON \(table)
                        FOR EACH STATEMENT EXECUTE FUNCTION \(StoreMove.table)()
                        """))
        }
    }

    /// The sentence a moved store refuses writes with (`StoreMove`), nil for one not moved.
    func movedSentence() throws(OffpeakError) -> String? {
        let rows = try query(
            PostgresQuery(unsafeSQL: "SELECT to_regclass('\(StoreMove.table)') IS NOT NULL AS moved"))
        guard let row = rows.first, try decode(row, as: Bool.self) else { return nil }
        let sentences = try query(PostgresQuery(unsafeSQL: "SELECT sentence FROM \(StoreMove.table) LIMIT 1"))
        return try sentences.first.map { row throws(OffpeakError) in try decode(row, as: String.self) }
    }

    func copyRows(of table: CopyTable, chunk: Int, _ body: ([[CopyValue]]) throws(OffpeakError) -> Void)
        throws(OffpeakError)
    {
        let columns = table.columns.map { column in
            column.kind == .time
                ? "to_char(\"\(column.name)\" AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS')"
                : "\"\(column.name)\""
        }
        let key = table.columns.first.map { "\"\($0.name)\"" } ?? "1"
        try query(
            PostgresQuery(
                unsafeSQL:
                    "DECLARE offpeak_copy NO SCROLL CURSOR FOR SELECT \(columns.joined(separator: ", ")) "
                    + "FROM \"\(table.name)\" ORDER BY \(key)"))
        while true {
            let rows = try query(PostgresQuery(unsafeSQL: "FETCH FORWARD \(chunk) FROM offpeak_copy"))
            if rows.isEmpty { break }
            try body(try rows.map { row throws(OffpeakError) in try copyValues(row, table) })
        }
        try query("CLOSE offpeak_copy")
    }

    private func copyValues(_ row: PostgresRow, _ table: CopyTable) throws(OffpeakError) -> [CopyValue] {
        var values: [CopyValue] = []
        values.reserveCapacity(table.columns.count)
        for (cell, column) in zip(row, table.columns) {
            do {
                switch column.kind {
                case .text, .time: values.append(try cell.decode(String?.self).map(CopyValue.text) ?? .null)
                case .integer: values.append(try cell.decode(Int64?.self).map(CopyValue.integer) ?? .null)
                case .boolean:
                    values.append(try cell.decode(Bool?.self).map { .integer($0 ? 1 : 0) } ?? .null)
                case .real: values.append(try cell.decode(Double?.self).map(CopyValue.real) ?? .null)
                case .bytes:
                    values.append(
                        try cell.decode(ByteBuffer?.self).map { .bytes(Array($0.readableBytesView)) } ?? .null
                    )
                }
            } catch {
                throw OffpeakError(
                    .ioError,
                    "PostgreSQL at \(url.endpoint) answered a value offpeak cannot read "
                        + "(\(table.name).\(column.name))", cause: "\(error)")
            }
        }
        return values
    }

    func copyHeldTable(of tables: [String]) throws(OffpeakError) -> String? {
        for table in tables {
            let rows = try query(PostgresQuery(unsafeSQL: "SELECT EXISTS (SELECT 1 FROM \"\(table)\")"))
            if let row = rows.first, try decode(row, as: Bool.self) { return table }
        }
        return nil
    }

    /// Writes in one transaction, then vacuums the ledger (`VACUUM` cannot run in a transaction):
    /// its pages are then marked all-visible, so the reports over it (`costs`) read its covering
    /// indexes alone (an index-only scan) rather than every row's page as well, which autovacuum
    /// would mark only later. On 250,000 copied rows `costs` took 0.29 s before, 0.19 s after.
    func copyWriting<T>(_ body: () throws(OffpeakError) -> T) throws(OffpeakError) -> T {
        let value = try transaction(body)
        try query("VACUUM ledger")
        return value
    }

    func copyClear(table: String) throws(OffpeakError) {
        try query(PostgresQuery(unsafeSQL: "DELETE FROM \"\(table)\""))
    }

    /// One multi-row `INSERT` per chunk (at most 65,535 parameters, which `StoreCopy.chunkRows`
    /// rows of any offpeak table stay under); times cast from the SQLite store's UTC text.
    func copyInsert(_ rows: [[CopyValue]], into table: CopyTable) throws(OffpeakError) {
        guard !rows.isEmpty else { return }
        var bindings = PostgresBindings(capacity: rows.count * table.columns.count)
        var tuples: [String] = []
        tuples.reserveCapacity(rows.count)
        for row in rows {
            var marks: [String] = []
            for (value, column) in zip(row, table.columns) {
                try Self.bind(value, column, table: table.name, into: &bindings)
                let mark = "$\(bindings.count)"
                marks.append(column.kind == .time ? "(\(mark) || '+00')::timestamptz" : mark)
            }
            tuples.append("(" + marks.joined(separator: ", ") + ")")
        }
        let names = table.columns.map { "\"\($0.name)\"" }.joined(separator: ", ")
        try query(
            PostgresQuery(
                unsafeSQL:
                    "INSERT INTO \"\(table.name)\" (\(names)) VALUES \(tuples.joined(separator: ", "))",
                binds: bindings))
    }

    /// Identity columns continue after the copied ids, as SQLite's `AUTOINCREMENT` does; the
    /// planner's statistics describe the rows just loaded (`ANALYZE`), not the empty tables they
    /// were made as, which autovacuum would correct only later.
    func copyFinish(_ schema: [CopyTable]) throws(OffpeakError) {
        let rows = try query(
            """
            SELECT table_name::text, column_name::text FROM information_schema.columns
            WHERE table_schema = current_schema() AND is_identity = 'YES'
            """)
        for row in rows {
            let (table, column) = try decode(row, as: (String, String).self)
            guard schema.contains(where: { $0.name == table }) else { continue }
            try query(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT setval(pg_get_serial_sequence('"\(table)"', '\(column)'),
                            coalesce(max("\(column)"), 0) + 1, false) FROM "\(table)"
                        """))
        }
        try query("ANALYZE")
    }

    private static func bind(
        _ value: CopyValue, _ column: CopyColumn, table: String, into bindings: inout PostgresBindings
    ) throws(OffpeakError) {
        switch (value, column.kind) {
        case (.null, _): bindings.appendNull()
        case (.text(let text), .text), (.text(let text), .time): bindings.append(text)
        case (.integer(let number), .integer): bindings.append(number)
        case (.integer(let number), .boolean): bindings.append(number != 0)
        case (.real(let number), .real): bindings.append(number)
        case (.integer(let number), .real): bindings.append(Double(number))
        case (.real(let number), .integer) where number == number.rounded() && abs(number) < 9e18:
            bindings.append(Int64(number))
        case (.bytes(let bytes), .bytes): bindings.append(ByteBuffer(bytes: bytes))
        default:
            throw OffpeakError(
                .dataError,
                "cannot copy \(table).\(column.name): a \(value.kindName) where \(column.kind) was expected")
        }
    }
}
