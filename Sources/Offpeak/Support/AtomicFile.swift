import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Replaces a file's contents all at once: the bytes go to a temporary file beside it, named for
/// the writing process (`host:pid`, as a lease's owner), which is then renamed over it, so a
/// reader never sees half a file.
///
/// A process killed mid-write leaves its temporary file behind (Foundation's `.atomic` leaves an
/// anonymous `.dat.nosync…` one that nothing can tell from a live writer's). Ours say whose they
/// are, so `removeLeftovers(in:)` can delete those of processes of this host that are gone.
enum AtomicFile {
    static let temporaryPrefix = ".offpeak-tmp-"

    /// How a write is made beyond the default (mode 0644 less the umask, no fsync, the temporary
    /// file named after the file).
    struct Options {
        /// The file's mode, set whatever the umask says (a file another user must read).
        var mode: mode_t?
        /// fsync the file before the rename, so a crash leaves the old file or the whole new one.
        var durable = false
        /// Appended to the temporary file's name, so a reader that picks files by their ending
        /// (node_exporter takes `*.prom`) never picks the temporary one.
        var temporarySuffix = ""
    }

    /// The temporary file this process writes `url` through.
    static func temporaryURL(for url: URL, suffix: String = "") -> URL {
        var temporaryName = "\(temporaryPrefix)\(ProcessOwner.current)-\(url.lastPathComponent)\(suffix)"
        if temporaryName.utf8.count > 255 {
            // A long name (up to 255 bytes is allowed) must not make its temporary file's too long.
            temporaryName =
                "\(temporaryPrefix)\(ProcessOwner.current)-\(SHA256.hex(Array(url.lastPathComponent.utf8)).prefix(16))"
                + suffix
        }
        return url.deletingLastPathComponent().appendingPathComponent(temporaryName)
    }

    static func write(_ data: Data, to url: URL, options: Options = Options()) throws(OffpeakError) {
        let temporary = temporaryURL(for: url, suffix: options.temporarySuffix)
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, options.mode ?? 0o644)
        guard descriptor >= 0 else { throw OffpeakError.system("cannot create", temporary.path) }
        var written = 0
        let complete = data.withUnsafeBytes { bytes -> Bool in
            while written < bytes.count {
                let count = Glibc.write(
                    descriptor, bytes.baseAddress.map { $0 + written }, bytes.count - written)
                if count < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                written += count
            }
            return true
        }
        // In order, so errno is the first failure's.
        guard complete, options.mode.map({ fchmod(descriptor, $0) == 0 }) ?? true,
            !options.durable || fsync(descriptor) == 0
        else {
            let error = OffpeakError.system("cannot write", temporary.path)
            close(descriptor)
            unlink(temporary.path)
            throw error
        }
        close(descriptor)
        guard rename(temporary.path, url.path) == 0 else {
            let error = OffpeakError.system("cannot rename to \(url.path):", temporary.path)
            unlink(temporary.path)
            throw error
        }
    }

    /// Writes a new file at `url`, whole, never over one that exists: the bytes go to this
    /// process's temporary file, which is linked at `url` (`link` refuses a name that exists, with
    /// no window between looking and writing) and then unlinked.
    /// - Throws: `.cannotCreate` when `url` exists, or cannot be made in its folder.
    static func create(_ data: Data, at url: URL) throws(OffpeakError) {
        let temporary = temporaryURL(for: url, suffix: ".new")
        do {
            try write(data, to: temporary)
        } catch {
            throw OffpeakError(
                .cannotCreate, "cannot create \(url.path)", cause: error.cause ?? error.message)
        }
        defer { unlink(temporary.path) }
        guard link(temporary.path, url.path) == 0 else {
            let exists = errno == EEXIST
            let cause = String(cString: strerror(errno))
            throw OffpeakError(
                .cannotCreate, exists ? "\(url.path) exists already" : "cannot create \(url.path)",
                cause: exists ? nil : cause)
        }
    }

    /// Deletes the temporary files of writers that are no longer running. A live writer's file
    /// (this process's, or any other host's) is left to its writer.
    static func removeLeftovers(in directory: URL) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
        for name in names where name.hasPrefix(temporaryPrefix) {
            let rest = name.dropFirst(temporaryPrefix.count)
            guard let colon = rest.firstIndex(of: ":"), let dash = rest[colon...].firstIndex(of: "-") else {
                continue
            }
            if !ProcessOwner.isAlive(String(rest[..<dash])) {
                unlink(directory.appendingPathComponent(name).path)
            }
        }
    }
}
