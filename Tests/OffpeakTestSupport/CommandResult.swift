import Foundation

/// What a finished process printed and how it exited.
public struct CommandResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String

    /// Runs `executable` to the end with `arguments`, in `directory`, with extra environment entries
    /// (a nil value removes the variable).
    public static func run(
        _ executable: URL, _ arguments: [String], in directory: URL? = nil,
        environment: [String: String?] = [:], stdin: Data? = nil, timeout: TimeInterval = 120
    ) throws -> CommandResult {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        var env = ProcessInfo.processInfo.environment
        // The machine's NetworkManager stays out of the tests (their sysfs fixtures decide) unless a
        // test puts its own fake nmcli on PATH or names one.
        if environment["PATH"] == nil, environment["OFFPEAK_NMCLI"] == nil { env["OFFPEAK_NMCLI"] = "" }
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = stdin == nil ? FileHandle.nullDevice : input
        // A command that exits (or is killed at the timeout) before it has read all its input must
        // fail its test, not end the test process with SIGPIPE or a failed write.
        signal(SIGPIPE, SIG_IGN)
        try process.run()
        if let stdin {
            Thread.detachNewThread {
                try? input.fileHandleForWriting.write(contentsOf: stdin)
                try? input.fileHandleForWriting.close()
            }
        }
        let deadline = Date() + timeout
        let outData = ReadAll(out.fileHandleForReading)
        let errData = ReadAll(err.fileHandleForReading)
        while process.isRunning {
            if Date() > deadline {
                // SIGTERM first, as a user would; offpeak answers it by finishing calls in flight, so a
                // process that is stuck (not in a call) gets SIGKILL a few seconds later.
                process.terminate()
                let killAt = Date() + 5
                while process.isRunning && Date() < killAt { Thread.sleep(forTimeInterval: 0.05) }
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                break
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        process.waitUntilExit()
        return CommandResult(
            status: process.terminationStatus, stdout: String(decoding: outData.wait(), as: UTF8.self),
            stderr: String(decoding: errData.wait(), as: UTF8.self))
    }
}

/// Drains a pipe on a background thread so a chatty child never blocks on a full pipe.
final class ReadAll: @unchecked Sendable {
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    func wait() -> Data {
        done.wait()
        return data
    }
}
