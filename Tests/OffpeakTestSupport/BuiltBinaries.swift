import Foundation

/// Where `swift build` put the executables: `OFFPEAK_BIN_DIR` (set by `make test`), else the
/// package's `.build/debug`.
public enum BuiltBinaries {
    public static var directory: URL {
        if let dir = ProcessInfo.processInfo.environment["OFFPEAK_BIN_DIR"], !dir.isEmpty {
            return URL(fileURLWithPath: dir, isDirectory: true)
        }
        return packageRoot.appendingPathComponent(".build/debug", isDirectory: true)
    }

    /// The repository root, found from this file's path.
    public static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    public static var offpeak: URL { directory.appendingPathComponent("offpeak") }
    public static var sim: URL { directory.appendingPathComponent("offpeak-sim") }
}
