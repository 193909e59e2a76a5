import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Read-only access to a sysfs tree (the real `/sys` or a test fixture) through the system calls
/// themselves, so that every failure keeps its `errno`: "not there" (`ENOENT`) is a fact about the
/// machine, "cannot read" (`EACCES`, `EIO`, ...) is not. Nothing here throws.
struct SysfsTree {
    let root: URL

    /// What listing a folder gave.
    enum Listing: Equatable {
        case missing
        /// The reason, as `strerror` says it.
        case failed(String)
        /// The names, sorted, without hidden ones.
        case names([String])
    }

    /// Attribute files are small; anything beyond this is garbage and is not read.
    static let maxBytes = 4096

    /// `relative` under the root. Said not to be a folder: Foundation would otherwise ask the file
    /// system, one `stat` per name on every reading (each call reads the conditions).
    func url(_ relative: String) -> URL { root.appendingPathComponent(relative, isDirectory: false) }

    /// The full path of `relative`, for messages.
    func path(_ relative: String) -> String { url(relative).path }

    /// Why the root is not a sysfs tree that can be read, or nil when it is one: it must be a
    /// folder (a link to one is fine) holding a `class` folder this user can list, as every sysfs
    /// does. A wrong `--sysfs-root` is caught here instead of reading as "no battery, offline".
    func rootFailure() -> SysfsFailure? {
        var info = stat()
        guard stat(root.path, &info) == 0 else {
            return SysfsFailure(path: root.path, reason: String(cString: strerror(errno)))
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            return SysfsFailure(path: root.path, reason: String(cString: strerror(ENOTDIR)))
        }
        switch entries("class") {
        case .names: return nil
        case .missing: return SysfsFailure(path: path("class"), reason: String(cString: strerror(ENOENT)))
        case .failed(let reason): return SysfsFailure(path: path("class"), reason: reason)
        }
    }

    /// Reads one attribute file: its first 4 KiB as text, invalid UTF-8 repaired. Opened without
    /// blocking, so a named pipe in a fixture cannot hang a run; `errno` decides what a failure
    /// means (`SysfsValue.from(errno:)`).
    func read(_ relative: String) -> SysfsValue {
        let descriptor = open(path(relative), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else { return .from(errno: errno) }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: Self.maxBytes)
        var count = 0
        while count < Self.maxBytes {
            let got = buffer.withUnsafeMutableBytes { raw in
                Glibc.read(descriptor, raw.baseAddress.map { $0 + count }, Self.maxBytes - count)
            }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { return .from(errno: errno) }
            if got == 0 { break }
            count += got
        }
        return .text(
            String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The names in a folder, sorted, without hidden ones.
    func entries(_ relative: String) -> Listing {
        guard let stream = opendir(path(relative)) else {
            return errno == ENOENT ? .missing : .failed(String(cString: strerror(errno)))
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: &entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if !name.hasPrefix(".") { names.append(name) }
        }
        return .names(names.sorted())
    }

    /// Whether a path exists (following links), or why that cannot be told.
    func exists(_ relative: String) -> Result<Bool, SysfsFailure> {
        var info = stat()
        if stat(path(relative), &info) == 0 { return .success(true) }
        let code = errno
        if code == ENOENT || code == ENOTDIR { return .success(false) }
        return .failure(SysfsFailure(path: path(relative), reason: String(cString: strerror(code))))
    }

    /// Where a symbolic link points, as written in the link; nil when the path is not a link.
    func linkTarget(_ relative: String) -> Result<String?, SysfsFailure> {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink(path(relative), &buffer, buffer.count - 1)
        guard length >= 0 else {
            let code = errno
            // EINVAL: not a link; ENOENT: gone since it was listed.
            if code == EINVAL || code == ENOENT { return .success(nil) }
            return .failure(SysfsFailure(path: path(relative), reason: String(cString: strerror(code))))
        }
        let bytes = buffer[..<length].map { UInt8(bitPattern: $0) }
        return .success(String(decoding: bytes, as: UTF8.self))
    }

    /// `failure` of `value` read from `relative`, as the `SysfsFailure` a decision records.
    func failure(_ relative: String, _ value: SysfsValue) -> SysfsFailure? {
        value.failure.map { SysfsFailure(path: path(relative), reason: $0) }
    }
}
