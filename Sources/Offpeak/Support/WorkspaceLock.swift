import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A non-blocking, exclusive lock on a workspace (`cache/tick.lock`, `flock(2)`): one tick at a
/// time. The kernel drops it when the process ends, however it ends, so a killed tick never leaves
/// the workspace locked. The file holds the holder's pid, for the message the next tick prints.
public final class WorkspaceLock {
    private let descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    public enum Outcome {
        case acquired(WorkspaceLock)
        /// Another process holds it; its pid when the file says.
        case held(by: Int32?)
    }

    public static func acquire(_ workspace: Workspace) throws(OffpeakError) -> Outcome {
        let directory = workspace.root.appendingPathComponent("cache", isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw OffpeakError(.ioError, "cannot create \(directory.path)", cause: "\(error)")
        }
        let path = directory.appendingPathComponent("tick.lock").path
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw OffpeakError(.ioError, "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let busy = errno == EWOULDBLOCK
            let why = String(cString: strerror(errno))
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = pread(descriptor, &buffer, buffer.count, 0)
            close(descriptor)
            guard busy else { throw OffpeakError(.ioError, "cannot lock \(path): \(why)") }
            let text = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self)
            return .held(by: Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pwrite(descriptor, pid, pid.count, 0)
        return .acquired(WorkspaceLock(descriptor: descriptor))
    }
}
