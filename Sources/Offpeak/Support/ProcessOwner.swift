import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A process as it names itself in what it leaves behind (a run's lease, a temporary file):
/// `host:pid`, so a later process can tell whether the one that left it is still running.
enum ProcessOwner {
    /// This process: `host:pid`.
    static var current: String {
        var name = [UInt8](repeating: 0, count: 256)
        let host =
            gethostname(&name, name.count - 1) == 0
            ? String(decoding: name.prefix { $0 != 0 }, as: UTF8.self) : "localhost"
        return "\(host):\(getpid())"
    }

    /// False only when `owner` is a process on this host that is gone; another host's process
    /// (or a name that is not `host:pid`) cannot be checked, so it counts as alive.
    static func isAlive(_ owner: String) -> Bool {
        let parts = owner.split(separator: ":")
        guard parts.count == 2, let pid = Int32(parts[1]) else { return true }
        let here = current.split(separator: ":").first
        guard parts[0] == here else { return true }
        return kill(pid, 0) == 0 || errno == EPERM
    }
}
