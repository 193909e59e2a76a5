import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Runs offpeak as a user file modes apply to, with copies of what it needs where that user can
/// reach them.
///
/// As root (CI) that user is `nobody` (`setpriv`), since root passes every file mode; otherwise it
/// is this user. The checkout may sit in a folder other users cannot enter (root's home is 0700,
/// and so is any `mktemp -d`), so nothing is run or read from it: the binary, and any fixture a
/// test names, are copied into one folder under the temporary directory that every user can read,
/// removed when this is released. Commands run with that folder as their working directory.
public final class OtherUser: @unchecked Sendable {
    public static var isRoot: Bool { getuid() == 0 }
    /// `nobody`'s ids, which the copies and what a test hands over are given to as root.
    public static let nobody: UInt32 = 65534

    /// The folder holding the copies (mode 0755).
    public let folder: URL
    /// The copy of `offpeak` (mode 0755).
    public private(set) var offpeak: URL

    public init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "offpeak-other-user-\(UUID().uuidString)", isDirectory: true)
        offpeak = folder.appendingPathComponent("offpeak")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        try Self.setMode(0o755, folder)
        offpeak = try copy(BuiltBinaries.offpeak, as: "offpeak")
    }

    deinit {
        // A test may have taken a mode away; give it back so everything can be removed.
        if let walk = FileManager.default.enumerator(atPath: folder.path) {
            for case let relative as String in walk {
                let url = folder.appendingPathComponent(relative)
                if !Self.isLink(url) { chmod(url.path, Self.isFolder(url) ? 0o755 : 0o644) }
            }
        }
        try? FileManager.default.removeItem(at: folder)
    }

    /// Copies `source` (a file or a folder) into the folder as `name`: every folder 0755, every
    /// file 0644 (0755 when it was executable), whatever the umask and the checkout's modes; links
    /// are copied as links.
    @discardableResult
    public func copy(_ source: URL, as name: String) throws -> URL {
        let target = folder.appendingPathComponent(name)
        try FileManager.default.copyItem(at: source, to: target)
        try Self.openUp(target)
        if let walk = FileManager.default.enumerator(atPath: target.path) {
            for case let relative as String in walk {
                try Self.openUp(target.appendingPathComponent(relative))
            }
        }
        return target
    }

    /// Runs the copy of offpeak with `arguments` as the other user.
    public func offpeak(
        _ arguments: [String], environment: [String: String?] = [:], stdin: Data? = nil
    ) throws -> CommandResult {
        let user =
            Self.isRoot
            ? ["setpriv", "--reuid=\(Self.nobody)", "--regid=\(Self.nobody)", "--clear-groups"] : []
        return try CommandResult.run(
            URL(fileURLWithPath: "/usr/bin/env"), user + [offpeak.path] + arguments, in: folder,
            environment: environment, stdin: stdin)
    }

    /// Sets `url`'s permission bits (not following a link).
    public static func setMode(_ mode: mode_t, _ url: URL) throws {
        guard chmod(url.path, mode) == 0 else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: url.path])
        }
    }

    private static func openUp(_ url: URL) throws {
        if isLink(url) { return }
        if isFolder(url) { return try setMode(0o755, url) }
        try setMode(FileManager.default.isExecutableFile(atPath: url.path) ? 0o755 : 0o644, url)
    }

    private static func isLink(_ url: URL) -> Bool {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: url.path)) != nil
    }

    private static func isFolder(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
            && isDirectory.boolValue
    }
}
