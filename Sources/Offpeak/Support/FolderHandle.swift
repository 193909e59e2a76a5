import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A folder held open by its descriptor, whose entries are reached relative to it: never through
/// a symbolic link, and never by a path that could be swapped between a check and a use.
///
/// Spool folders are written by other programs, so an entry may be anything: a link to a file
/// outside the workspace, a named pipe that blocks whoever opens it, a folder. Every system call
/// intake makes is here, in one small layer (as `FileLock` and `AtomicFile` hold the others).
final class FolderHandle {
    /// What an entry is, as `lstat` sees it: a link is a link, not what it points to.
    enum Kind: Equatable, Sendable {
        case file, folder, symbolicLink, namedPipe, socket, device, other
    }

    /// Why an entry could not be had as asked.
    enum Failure: Error, Equatable {
        case missing
        /// It is there, but it is not what was asked for (a link where a file was expected, ...).
        case isA(Kind)
        /// Another failed system call, with its `errno`.
        case system(Int32)

        var reason: String {
            switch self {
            case .missing: "it is gone"
            case .isA(let kind): "it is \(kind)"
            case .system(let code): String(cString: strerror(code))
            }
        }
    }

    /// Which file an entry is (device and inode), to tell whether a name still holds what was read.
    struct Identity: Equatable {
        var device: UInt64
        var inode: UInt64
    }

    /// The folder's path, for messages only: nothing is opened by it.
    let path: String
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Opens the folder at `path`, following links on the way: the workspace is wherever the user
    /// keeps it. Everything inside is then opened relative to it with `folder(_:)`.
    static func open(_ path: String) -> Result<FolderHandle, Failure> {
        let descriptor = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return .failure(errno == ENOENT ? .missing : .system(errno)) }
        return .success(FolderHandle(path: path, descriptor: descriptor))
    }

    /// Opens the folder `name` in this one, never through a link (`O_NOFOLLOW`); with `create`,
    /// makes it first when it is missing.
    func folder(_ name: String, create: Bool = false) -> Result<FolderHandle, Failure> {
        let bytes = Array(name.utf8)
        if create, mkdirat(descriptor, name, 0o755) != 0, errno != EEXIST {
            return .failure(.system(errno))
        }
        let opened = openat(descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard opened >= 0 else { return .failure(failure(errno, at: bytes)) }
        return .success(FolderHandle(path: path + "/" + name, descriptor: opened))
    }

    /// The names in the folder as raw bytes (a name need not be UTF-8), without `.` and `..`.
    func names() -> Result<[[UInt8]], Failure> {
        let copy = dup(descriptor)
        guard copy >= 0, let stream = fdopendir(copy) else {
            let code = errno
            if copy >= 0 { close(copy) }
            return .failure(.system(code))
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var names: [[UInt8]] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: &entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            if name != [0x2E] && name != [0x2E, 0x2E] { names.append(name) }
        }
        return .success(names)
    }

    /// What `name` is, without following a link.
    func kind(of name: [UInt8]) -> Result<Kind, Failure> {
        var info = stat()
        guard fstatat(descriptor, cString(name), &info, AT_SYMLINK_NOFOLLOW) == 0 else {
            return .failure(errno == ENOENT ? .missing : .system(errno))
        }
        return .success(Self.kind(info.st_mode))
    }

    /// Which file `name` names now, not following a link.
    func identity(of name: [UInt8]) -> Identity? {
        var info = stat()
        guard fstatat(descriptor, cString(name), &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        return Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// Reads the regular file `name` through one descriptor: opened without following a link and
    /// without blocking (a named pipe cannot hang the reader), then checked to be a regular file.
    func readFile(_ name: [UInt8]) -> Result<(data: Data, identity: Identity), Failure> {
        let file = openat(
            descriptor, cString(name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard file >= 0 else { return .failure(failure(errno, at: name)) }
        defer { close(file) }
        var info = stat()
        guard fstat(file, &info) == 0 else { return .failure(.system(errno)) }
        let kind = Self.kind(info.st_mode)
        guard kind == .file else { return .failure(.isA(kind)) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(file, &buffer, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(.system(errno))
            }
            if count == 0 { break }
            data.append(contentsOf: buffer[..<count])
        }
        return .success((data, Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))))
    }

    /// Renames `name` to `target` in `folder` (on the same file system). A link at either name is
    /// moved or replaced itself, never followed.
    func move(_ name: [UInt8], to folder: FolderHandle, as target: [UInt8]) -> Failure? {
        renameat(descriptor, cString(name), folder.descriptor, cString(target)) == 0 ? nil : .system(errno)
    }

    /// Waits for an exclusive `flock` on the folder itself, held until this handle is released:
    /// no lock file, so there is nothing in the folder a link could redirect.
    func lock() -> Failure? {
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { return .system(errno) }
        }
        return nil
    }

    /// A failed `open` of `name`, told apart: `ELOOP` under `O_NOFOLLOW` (and `ENOTDIR` under
    /// `O_DIRECTORY`) mean the entry is something else, and `lstat` says what.
    private func failure(_ code: Int32, at name: [UInt8]) -> Failure {
        if code == ENOENT { return .missing }
        if code == ELOOP || code == ENOTDIR || code == ENXIO, case .success(let kind) = kind(of: name) {
            return .isA(kind)
        }
        return .system(code)
    }

    private func cString(_ bytes: [UInt8]) -> [CChar] {
        bytes.map { CChar(bitPattern: $0) } + [0]
    }

    private static func kind(_ mode: mode_t) -> Kind {
        switch mode & S_IFMT {
        case S_IFREG: .file
        case S_IFDIR: .folder
        case S_IFLNK: .symbolicLink
        case S_IFIFO: .namedPipe
        case S_IFSOCK: .socket
        case S_IFCHR, S_IFBLK: .device
        default: .other
        }
    }
}

extension FolderHandle.Kind: CustomStringConvertible {
    /// "a symbolic link", "a folder", ...: how messages name it.
    var description: String {
        switch self {
        case .file: "a regular file"
        case .folder: "a folder"
        case .symbolicLink: "a symbolic link"
        case .namedPipe: "a named pipe"
        case .socket: "a socket"
        case .device: "a device"
        case .other: "not a regular file"
        }
    }
}
