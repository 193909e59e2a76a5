import Foundation

/// One file that a conditions decision read, what it held and what that meant.
struct Reading: Sendable, Equatable, Codable {
    /// The path relative to the sysfs root, e.g. `class/power_supply/BAT0/status`.
    var file: String
    /// The trimmed contents (newlines shown as spaces, long values cut), or `missing` / `unreadable`.
    var value: String
    /// One sentence: what the value meant for the decision.
    var rule: String

    init(file: String, value: String, rule: String) {
        self.file = file
        self.value = value
        self.rule = rule
    }
}

/// What reading one sysfs attribute gave.
enum SysfsValue: Equatable {
    /// No such file (or a dangling link).
    case missing
    /// The path exists but could not be read: a directory, no permission, or an error such as the
    /// `EINVAL` the kernel returns for `carrier` of an interface that is down.
    case unreadable
    /// The contents, with surrounding whitespace trimmed.
    case text(String)

    /// The contents, or nil when there are none.
    var string: String? {
        if case .text(let text) = self { return text }
        return nil
    }

    /// The contents as a whole number, or nil when missing, unreadable or not a number.
    var integer: Int? { string.flatMap { Int($0) } }

    /// How a reading shows it: the text on one line (at most 80 characters), or `missing` / `unreadable`.
    var shown: String {
        switch self {
        case .missing: return "missing"
        case .unreadable: return "unreadable"
        case .text(let text):
            let line = text.split(whereSeparator: \.isNewline).joined(separator: " ")
            return line.count > 80 ? String(line.prefix(77)) + "..." : line
        }
    }
}

/// Read-only access to a sysfs tree (the real `/sys` or a test fixture); nothing here throws.
struct SysfsTree {
    let root: URL

    /// Attribute files are small; anything beyond this is garbage and is not read.
    static let maxBytes = 4096

    func url(_ relative: String) -> URL { root.appendingPathComponent(relative) }

    /// Reads one attribute file. A missing path gives `.missing`; a directory or a failed open/read
    /// gives `.unreadable`; anything else gives its first 4 KiB as text, invalid UTF-8 repaired.
    func read(_ relative: String) -> SysfsValue {
        let path = url(relative).path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return .missing }
        if isDirectory.boolValue { return .unreadable }
        guard let handle = FileHandle(forReadingAtPath: path) else { return .unreadable }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: Self.maxBytes) else { return .unreadable }
        return .text(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The names in a directory, sorted; nil when it is missing or cannot be listed.
    func entries(_ relative: String) -> [String]? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: url(relative).path) else {
            return nil
        }
        return names.filter { !$0.hasPrefix(".") }.sorted()
    }

    /// Whether a path exists (following links).
    func exists(_ relative: String) -> Bool {
        FileManager.default.fileExists(atPath: url(relative).path)
    }

    /// Where a symbolic link points, as written in the link; nil when the path is not a link.
    func linkTarget(_ relative: String) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: url(relative).path)
    }
}
