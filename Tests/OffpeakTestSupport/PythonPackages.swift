import Foundation

/// Python packages a test checks offpeak against (croniter, the official SDKs). A test that needs
/// one installs it, and fails, never skips, when it cannot: a suite that skipped them would go
/// green without checking what it claims.
public enum PythonPackages {
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String

        public init(description: String) { self.description = description }
    }

    /// Imports `modules`, installing `packages` with pip first when one is missing (retried for
    /// externally managed and user-only environments).
    /// - Throws: `Unavailable`, naming what is needed for `purpose`, when they still do not import.
    public static func require(_ modules: [String], packages: [String], for purpose: String) throws {
        let check = ["-c", "import " + modules.joined(separator: ", ")]
        if try python(check).status == 0 { return }
        var log = ""
        for extra in [[], ["--break-system-packages"], ["--user"], ["--user", "--break-system-packages"]] {
            let result = try python(["-m", "pip", "install", "--quiet"] + extra + packages)
            log += result.stderr
            if try python(check).status == 0 { return }
        }
        throw Unavailable(
            description:
                "\(packages.joined(separator: ", ")) \(packages.count == 1 ? "is" : "are") needed to "
                + "\(purpose) and could not be installed with `python3 -m pip install "
                + "\(packages.joined(separator: " "))`: \(log.suffix(600))")
    }

    public static func python(_ arguments: [String], stdin: Data? = nil) throws -> CommandResult {
        try CommandResult.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3"] + arguments, stdin: stdin, timeout: 900)
    }
}
