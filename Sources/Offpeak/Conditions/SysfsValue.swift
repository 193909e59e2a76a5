import Foundation

/// One file that a conditions decision read, what it held and what that meant.
struct Reading: Sendable, Equatable, Codable {
    /// The path relative to the sysfs root, e.g. `class/power_supply/BAT0/status`.
    var file: String
    /// The trimmed contents (newlines shown as spaces, long values cut), or `missing`,
    /// `no value (...)` or `cannot be read (...)`.
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
///
/// Three ways of not having a value are kept apart, because only one of them is an answer: a file
/// that is not there (no battery, a VM with no `power_supply` folder) and the kernel's own "no
/// value now" are facts the rules have fallbacks for; a file that is there but cannot be read
/// (no permission, an I/O error, a folder where a file should be) says nothing about the machine,
/// and a reading built on it must not pass for one.
enum SysfsValue: Equatable {
    /// No such file (or a dangling link): `ENOENT`.
    case missing
    /// The kernel answered the read with an error that means "no value now": `EINVAL` for `carrier`
    /// of an interface that is down, `ENODATA` or `ENODEV` from a power supply's driver.
    case noValue(String)
    /// The path exists (or a folder on the way does) but could not be read: the reason, as
    /// `strerror` says it (`Permission denied`, `Input/output error`, `Is a directory`).
    case failed(String)
    /// The contents, with surrounding whitespace trimmed.
    case text(String)

    /// The errors of `read(2)` that are the kernel's answer rather than a failure to ask it.
    static let kernelNoValue: Set<Int32> = [EINVAL, ENODATA, ENODEV]

    /// What a failed `open` or `read` with `code` means.
    static func from(errno code: Int32) -> SysfsValue {
        let reason = String(cString: strerror(code))
        if code == ENOENT { return .missing }
        return kernelNoValue.contains(code) ? .noValue(reason) : .failed(reason)
    }

    /// The contents, or nil when there are none.
    var string: String? {
        if case .text(let text) = self { return text }
        return nil
    }

    /// The contents as a whole number, or nil when there are none or they are not a number.
    var integer: Int? { string.flatMap { Int($0) } }

    /// Why it could not be read, or nil when it was read (or is missing, or has no value).
    var failure: String? {
        if case .failed(let reason) = self { return reason }
        return nil
    }

    /// How a reading shows it: the text on one line (at most 80 characters), or `missing`,
    /// `no value (...)`, `cannot be read (...)`.
    var shown: String {
        switch self {
        case .missing: return "missing"
        case .noValue(let reason): return "no value (\(reason))"
        case .failed(let reason): return "cannot be read (\(reason))"
        case .text(let text):
            let line = text.split(whereSeparator: \.isNewline).joined(separator: " ")
            return line.count > 80 ? String(line.prefix(77)) + "..." : line
        }
    }
}

/// A path under the sysfs root (or the root itself) that could not be read: the first one a
/// reading of power or the network met. Its decision is then unknown, never a guess.
struct SysfsFailure: Error, Sendable, Equatable {
    /// The full path, as the user would `ls` it.
    var path: String
    /// What went wrong (`Permission denied`, `not a folder`).
    var reason: String

    /// "cannot read /sys/class/power_supply/BAT0/status (Permission denied)".
    var description: String { "cannot read \(path) (\(reason))" }

    /// The same as a sentence, for a decision's `why`: "Cannot read /sys/... (Permission denied)."
    var sentence: String { "Cannot read \(path) (\(reason))." }
}
