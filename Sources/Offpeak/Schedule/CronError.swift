/// Why a cron expression does not parse: the field at fault and what was expected there.
///
/// Prints as one line, e.g. `hour: expected 0-23, got '25'`; the spec parser and the CLI turn it
/// into an `OffpeakError` with their own location and exit status.
public struct CronError: Error, CustomStringConvertible, Sendable, Equatable {
    /// `minute`, `hour`, `day-of-month`, `month` or `day-of-week`; `nil` for the expression as a whole.
    var field: String?
    /// What was expected and what was found.
    var message: String

    init(field: String?, _ message: String) {
        self.field = field
        self.message = message
    }

    public var description: String {
        field.map { "\($0): \(message)" } ?? message
    }
}
