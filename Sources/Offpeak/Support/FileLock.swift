import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// An exclusive `flock(2)` on a file (created owner-only), held until the value is released. The
/// kernel drops it when the process ends, however it ends, so a killed process never leaves it
/// held. Serves the workspace's tick lock and the migration lock (a spool folder is locked by its
/// own descriptor, `FolderHandle.lock()`).
final class FileLock {
    let path: String
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }  // closing the file releases the lock

    /// Waits for the lock.
    static func exclusive(at path: String) throws(OffpeakError) -> FileLock {
        let lock = try open(path)
        while flock(lock.descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { throw OffpeakError.system("cannot lock", lock.path) }
        }
        return lock
    }

    /// Takes the lock if no other process holds it.
    /// - Returns: the lock, or `nil` when it is held elsewhere, with the file opened for reading
    ///   what its holder wrote.
    static func tryExclusive(at path: String) throws(OffpeakError) -> (lock: FileLock?, holder: String) {
        let lock = try open(path)
        guard flock(lock.descriptor, LOCK_EX | LOCK_NB) == 0 else {
            guard errno == EWOULDBLOCK else { throw OffpeakError.system("cannot lock", lock.path) }
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = pread(lock.descriptor, &buffer, buffer.count, 0)
            return (nil, String(decoding: buffer.prefix(max(0, count)), as: UTF8.self))
        }
        return (lock, "")
    }

    /// Replaces the file's contents (what a holder tells the processes that find it locked).
    func write(_ text: String) {
        let bytes = Array(text.utf8)
        _ = ftruncate(descriptor, 0)
        _ = pwrite(descriptor, bytes, bytes.count, 0)
    }

    private static func open(_ path: String) throws(OffpeakError) -> FileLock {
        let descriptor = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw OffpeakError.system("cannot open", path)
        }
        return FileLock(path: path, descriptor: descriptor)
    }
}
