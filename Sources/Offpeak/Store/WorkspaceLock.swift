import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A non-blocking, exclusive lock on a workspace (`cache/tick.lock`, `flock(2)`): the tick lock of
/// a SQLite store (`TickLock`), one tick at a time, which a copy of the store holds too. The kernel
/// drops it when the process ends, however it ends, so a killed tick never leaves the workspace
/// locked. The file holds the holder's pid, for the message the next tick prints.
final class WorkspaceLock {
    private let lock: FileLock

    private init(lock: FileLock) {
        self.lock = lock
    }

    enum Outcome {
        case acquired(WorkspaceLock)
        /// Another process holds it; its pid when the file says.
        case held(by: Int32?)
    }

    static func acquire(_ workspace: Workspace) throws(OffpeakError) -> Outcome {
        let directory = workspace.root.appendingPathComponent("cache", isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw OffpeakError(.ioError, "cannot create \(directory.path)", cause: "\(error)")
        }
        let attempt = try FileLock.tryExclusive(at: directory.appendingPathComponent("tick.lock").path)
        guard let lock = attempt.lock else {
            return .held(by: Int32(attempt.holder.trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        lock.write("\(getpid())\n")
        return .acquired(WorkspaceLock(lock: lock))
    }
}
