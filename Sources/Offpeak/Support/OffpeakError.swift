import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// An error a user sees: what went wrong, where, and which exit status it maps to.
///
/// Internal failures are plain enums close to where they happen; they are turned into an
/// `OffpeakError` at the point where we know what the user should be told.
public struct OffpeakError: Error, CustomStringConvertible, Sendable {
    /// The exit status the CLI uses for this error.
    public var status: ExitStatus
    /// One line saying what went wrong and what was expected.
    var message: String
    /// Where: `file:line` or `file:line:column`, when the error is about a file.
    var location: String?
    /// What caused it, when that helps the user.
    var cause: String?

    public init(_ status: ExitStatus, _ message: String, location: String? = nil, cause: String? = nil) {
        self.status = status
        self.message = message
        self.location = location
        self.cause = cause
    }

    /// The location's control characters are written out (`docs/new\nline.md:3`): it names a
    /// file, whose name a user chose and which must not break the line or reach the terminal.
    public var description: String {
        var text = location.map { "\(ReadableText.escaped($0)): \(message)" } ?? message
        if let cause { text += " (\(cause))" }
        return text
    }
}

extension OffpeakError {
    /// A failed system call on `path`, with `errno` as the cause: "cannot open /x (Permission denied)".
    static func system(_ what: String, _ path: String) -> OffpeakError {
        OffpeakError(.ioError, "\(what) \(path)", cause: String(cString: strerror(errno)))
    }
}
