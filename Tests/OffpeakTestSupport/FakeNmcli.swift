import Foundation

/// A fake NetworkManager: an executable `nmcli` shell script in a temporary folder, to put first
/// in `PATH` (`pathEntry`). offpeak finds and runs it as it would the real one, through the real
/// code path that starts a process. Removed when the test ends.
///
/// The script checks it was asked exactly what offpeak asks the real nmcli
/// (`--terse --fields GENERAL.DEVICE,GENERAL.METERED device show`), and with `LC_ALL=C`; asked
/// anything else it fails as nmcli does on a bad argument (status 2).
public final class FakeNmcli: @unchecked Sendable {
    /// The folder holding `nmcli`.
    public let folder: URL

    /// Answers with `stdout` and `stderr`, exiting with `status`, after `sleepSeconds`.
    public init(stdout: String, stderr: String = "", status: Int32 = 0, sleepSeconds: Int = 0) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "offpeak-nmcli-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(stdout.utf8).write(to: folder.appendingPathComponent("stdout"))
        try Data(stderr.utf8).write(to: folder.appendingPathComponent("stderr"))
        let script = """
            #!/bin/sh
            if [ "$*" != "--terse --fields GENERAL.DEVICE,GENERAL.METERED device show" ] \\
                || [ "$LC_ALL" != "C" ]; then
              echo "Error: unexpected call: $* (LC_ALL=$LC_ALL)" >&2
              exit 2
            fi
            \(sleepSeconds > 0 ? "sleep \(sleepSeconds)" : "")
            cat '\(folder.path)/stdout'
            cat '\(folder.path)/stderr' >&2
            exit \(status)

            """
        try Self.writeExecutable(script, to: folder.appendingPathComponent("nmcli"))
    }

    /// Writes through a descriptor that closes on exec: a process another test thread starts
    /// meanwhile would otherwise inherit it open for writing, and starting the script would then
    /// fail with "Text file busy" (ETXTBSY) for as long as that process lives.
    private static func writeExecutable(_ text: String, to url: URL) throws {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        guard fd >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path]) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == bytes.count else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    /// `PATH` with this folder first, then the usual system folders (for `sh`, `cat`, `sleep`).
    public var path: String { "\(folder.path):/usr/local/bin:/usr/bin:/bin" }

    /// What the real nmcli prints for devices and their `GENERAL.METERED` words, in terse form.
    public static func terse(_ devices: [(String, String)]) -> String {
        devices.map { "GENERAL.DEVICE:\($0.0)\nGENERAL.METERED:\($0.1)\n" }.joined(separator: "\n")
    }
}
