import Foundation

/// How every report is written as JSON: `--json` on the command line and the dashboard's JSON views
/// (`DashboardServer`), one encoder for both so a script can read either.
public enum ReportJSON {
    private static func encode<T: Encodable>(_ value: T) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return try encoder.encode(value)
    }

    /// `value` as `--json` prints it: the document and a newline.
    public static func printed<T: Encodable>(_ value: T) throws -> Data {
        try encode(value) + Data("\n".utf8)
    }
}
