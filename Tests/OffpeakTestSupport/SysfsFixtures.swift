import Foundation

/// The sysfs trees committed under `Tests/Fixtures/sysfs/` (`battery-wwan`, `ac-wifi`), and a
/// switchable root: a symlink a test points at one fixture, then another, as a laptop is unplugged
/// or moves from a phone's hotspot to home WiFi.
public final class SwitchableSysfs: @unchecked Sendable {
    /// The folder offpeak reads (`--sysfs-root`, `OFFPEAK_SYSFS_ROOT`).
    public let root: URL
    private let holder: URL

    public static var fixtures: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/sysfs", isDirectory: true)
    }

    public init(_ fixture: String) throws {
        holder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "offpeak-sysfs-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: holder, withIntermediateDirectories: true)
        root = holder.appendingPathComponent("sys")
        try switchTo(fixture)
    }

    deinit { try? FileManager.default.removeItem(at: holder) }

    /// Points the root at another fixture, atomically (a new link renamed over the old one).
    public func switchTo(_ fixture: String) throws {
        let target = Self.fixtures.appendingPathComponent(fixture, isDirectory: true)
        guard FileManager.default.fileExists(atPath: target.path) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: target.path])
        }
        let next = holder.appendingPathComponent("sys.next")
        try? FileManager.default.removeItem(at: next)
        try FileManager.default.createSymbolicLink(at: next, withDestinationURL: target)
        guard rename(next.path, root.path) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }
}
