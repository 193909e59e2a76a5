import ArgumentParser
import Foundation
import Logging
import Offpeak

#if canImport(Glibc)
import Glibc
#endif

/// Printing, logging set-up and the mapping of errors to exit statuses: all the CLI's I/O.
enum Terminal {
    nonisolated(unsafe) private static var loggingReady = false

    static func bootstrapLogging(verbose: Bool, environment: [String: String]) -> Logger {
        let level =
            verbose
            ? Logger.Level.debug
            : environment["OFFPEAK_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .warning
        if !loggingReady {
            loggingReady = true
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
        }
        return Logger(label: "offpeak")
    }

    /// Runs `body`; an `OffpeakError` is printed as one line and exits with its status.
    static func attempt<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as OffpeakError {
            printError(error.description)
            throw ExitCode(error.status.rawValue)
        }
    }

    static func printError(_ line: String) {
        writeError("offpeak: \(line)\n")
    }

    /// Writes to stderr, giving up on a failed write: FileHandle traps on one, and after SIGHUP the
    /// terminal is gone (EIO) while the run still has to checkpoint and exit 75.
    static func writeError(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }

    static func printJSON<T: Encodable>(_ value: T) throws {
        print(String(decoding: try ReportJSON.printed(value), as: UTF8.self), terminator: "")
    }

    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// A progress callback that redraws one line on stderr, or nil when stderr is not a terminal.
    static func progressLine() -> (@Sendable (RunProgress) -> Void)? {
        guard stderrIsTerminal else { return nil }
        return { progress in
            var line =
                "\r\u{1B}[K[\(progress.done)/\(progress.total)] \(progress.job) · $\(Money.format(progress.dollars))"
            if progress.failed > 0 { line += " · \(progress.failed) failed" }
            writeError(line)
        }
    }

    static func endProgressLine() {
        if stderrIsTerminal { writeError("\r\u{1B}[K") }
    }
}
