import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// libpq's password file (`~/.pgpass`, or the file `PGPASSFILE` names): lines of
/// `hostname:port:database:username:password`, the first four matched literally or by `*`, `\:` and
/// `\\` escaping a colon and a backslash, `#` starting a comment. The first line that matches wins.
///
/// As libpq does, a file that other users can read (any group or other bit set) is not read: a
/// warning says so and the connection goes on without it.
enum PostgresPassFile {
    static let variable = "PGPASSFILE"

    /// Where the file is: `PGPASSFILE`, else `.pgpass` in `HOME` (else the user's home folder).
    static func location(environment: [String: String]) -> URL? {
        if let path = environment[variable], !path.isEmpty { return URL(fileURLWithPath: path) }
        if let home = environment["HOME"], !home.isEmpty {
            return URL(fileURLWithPath: home).appendingPathComponent(".pgpass")
        }
        guard let entry = getpwuid(geteuid()), let home = entry.pointee.pw_dir else { return nil }
        return URL(fileURLWithPath: String(cString: home)).appendingPathComponent(".pgpass")
    }

    /// The password the file gives for this connection, if any.
    static func password(
        for url: PostgresURL, environment: [String: String], logger: Logger
    ) -> PostgresPassword? {
        guard let file = location(environment: environment) else { return nil }
        var info = stat()
        guard stat(file.path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        if info.st_mode & (S_IRWXG | S_IRWXO) != 0 {
            logger.warning(
                "password file \(file.path) has group or other access and is ignored; its permissions should be u=rw (0600) or less"
            )
            return nil
        }
        guard let data = FileManager.default.contents(atPath: file.path) else { return nil }
        return password(in: String(decoding: data, as: UTF8.self), for: url)
    }

    /// The password of the first line of `text` that matches `url`.
    static func password(in text: String, for url: PostgresURL) -> PostgresPassword? {
        let wanted = [url.host, String(url.port), url.database, url.user]
        for line in text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline) {
            if line.hasPrefix("#") { continue }
            let fields = Self.fields(of: line)
            guard fields.count >= 5 else { continue }
            let matches = zip(fields.prefix(4), wanted).allSatisfy { field, value in
                field.isWildcard || field.text == value
            }
            if matches { return PostgresPassword(fields[4].text) }
        }
        return nil
    }

    /// One field of a line: its text with escapes removed, and whether it was written as a bare
    /// `*` (`\*` is a literal star, as in libpq).
    struct Field: Equatable {
        var text: String
        var isWildcard: Bool
    }

    /// A line's fields, split at the colons that are not escaped.
    static func fields(of line: Substring) -> [Field] {
        var fields: [Field] = []
        var field = ""
        var raw = ""
        var escaped = false
        for character in line {
            if escaped {
                field.append(character)
                raw.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
                raw.append(character)
            } else if character == ":" {
                fields.append(Field(text: field, isWildcard: raw == "*"))
                field = ""
                raw = ""
            } else {
                field.append(character)
                raw.append(character)
            }
        }
        fields.append(Field(text: field, isWildcard: raw == "*"))
        return fields
    }
}
