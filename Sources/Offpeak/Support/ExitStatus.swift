/// Process exit statuses, from BSD's sysexits.h, so scripts and cron can tell failures apart.
public enum ExitStatus: Int32, Sendable, Codable {
    case ok = 0
    /// The command line was wrong.
    case usage = 64
    /// Input data (a job spec, a submitted line) was wrong.
    case dataError = 65
    /// A service offpeak needs (the provider) could not be reached or refused the work.
    case unavailable = 69
    /// Something internal went wrong that is not the user's input.
    case software = 70
    /// A file offpeak would create exists already, or cannot be made there (`offpeak init`).
    case cannotCreate = 73
    /// I/O on the workspace failed.
    case ioError = 74
    /// Temporary: the run was interrupted or stopped and resumes on the next `run` or `tick`.
    case temporaryFailure = 75
    /// Configuration is missing or wrong (offpeak.yaml, an API key).
    case configuration = 78
}
