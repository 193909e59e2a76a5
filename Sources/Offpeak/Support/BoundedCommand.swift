import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Runs a small helper program (such as `nmcli`) that must never hang or flood offpeak: it gets a
/// deadline and an output cap, and whatever it does, the caller has an answer in bounded time.
///
/// The program starts in a process group of its own, with no input, default signal handling (the
/// CLI ignores SIGTERM/SIGINT/SIGHUP for its own handlers, and ignored signals are inherited) and
/// the given environment. At the deadline the whole group is killed (SIGKILL: the helpers run here
/// only read), so a child's children cannot keep its pipes open either; after the program exits,
/// a child it left holding the pipes gets `drainGrace` seconds, then the same. Built on
/// `posix_spawn` rather than Foundation's `Process`, which offers neither the group nor the kill.
struct BoundedCommand: Sendable {
    /// How a run ended.
    enum Outcome: Sendable, Equatable {
        /// The program exited; `status` is its exit status, or 128 plus the signal that ended it.
        case exited(status: Int32, stdout: String, stderr: String)
        /// It was still running at the deadline and was killed.
        case timedOut
        /// It could not be started; the system's reason.
        case couldNotStart(String)
    }

    let executable: URL
    let arguments: [String]
    let environment: [String: String]
    /// The longest the program may run, in seconds.
    let timeout: TimeInterval
    /// Bytes kept from each of stdout and stderr; the rest is read and dropped.
    static let maxOutputBytes = 256 * 1024
    /// How long pipes may stay open after the program exited.
    static let drainGrace: TimeInterval = 0.5
    /// How often a start that failed with ETXTBSY is tried again, 50 ms apart.
    static let busyRetries = 5

    func run() -> Outcome {
        var outPipe: [Int32] = [-1, -1]
        var errPipe: [Int32] = [-1, -1]
        guard Self.makePipe(&outPipe) else { return .couldNotStart(Self.errnoText()) }
        guard Self.makePipe(&errPipe) else {
            outPipe.forEach { close($0) }
            return .couldNotStart(Self.errnoText())
        }
        let pid: pid_t
        switch spawn(stdout: outPipe[1], stderr: errPipe[1]) {
        case .success(let spawned): pid = spawned
        case .failure(let reason):
            (outPipe + errPipe).forEach { close($0) }
            return .couldNotStart(reason)
        }
        close(outPipe[1])
        close(errPipe[1])
        var streams = [OutputStream(fd: outPipe[0]), OutputStream(fd: errPipe[0])]
        defer { streams.forEach { close($0.fd) } }

        let deadline = Date() + timeout
        var exitStatus: Int32?
        var drainUntil = Date.distantFuture
        while true {
            if exitStatus == nil {
                var raw: Int32 = 0
                if waitpid(pid, &raw, WNOHANG) == pid {
                    exitStatus = Self.decode(raw)
                    drainUntil = Date() + Self.drainGrace
                }
            }
            let open = streams.indices.filter { streams[$0].isOpen }
            if let exitStatus, open.isEmpty || Date() >= drainUntil {
                if !open.isEmpty { kill(-pid, SIGKILL) }
                return .exited(status: exitStatus, stdout: streams[0].text, stderr: streams[1].text)
            }
            if exitStatus == nil && Date() >= deadline {
                kill(-pid, SIGKILL)
                var raw: Int32 = 0
                _ = waitpid(pid, &raw, 0)
                return .timedOut
            }
            var polls = open.map { pollfd(fd: streams[$0].fd, events: Int16(POLLIN), revents: 0) }
            // Short waits: the exit is noticed by polling waitpid, not by a signal.
            _ = poll(&polls, nfds_t(polls.count), 20)
            for (slot, index) in open.enumerated() where polls[slot].revents != 0 {
                streams[index].readOnce()
            }
        }
    }

    private enum Spawned { case success(pid_t), failure(String) }

    private func spawn(stdout: Int32, stderr: Int32) -> Spawned {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        var result = posix_spawn(&pid, executable.path, &actions, &attributes, argv, envp)
        // "Text file busy": the program is open for writing somewhere, typically by a process
        // started while it was being written (an update in progress); that passes, so try again.
        for _ in 0..<Self.busyRetries where result == ETXTBSY {
            Thread.sleep(forTimeInterval: 0.05)
            result = posix_spawn(&pid, executable.path, &actions, &attributes, argv, envp)
        }
        guard result == 0 else { return .failure(String(cString: strerror(result))) }
        return .success(pid)
    }

    /// An exit status from `waitpid`'s raw value (the WIFEXITED / WTERMSIG layout).
    private static func decode(_ raw: Int32) -> Int32 {
        let signal = raw & 0x7f
        return signal == 0 ? (raw >> 8) & 0xff : 128 + signal
    }

    /// A pipe whose ends close on exec, so programs other threads start do not hold them open
    /// (`pipe2` is not visible from Swift's Glibc module; the gap before `fcntl` is a few
    /// instructions).
    private static func makePipe(_ fds: inout [Int32]) -> Bool {
        guard pipe(&fds) == 0 else { return false }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return true
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }
}

/// One pipe from the program: read as data arrives, up to the cap.
private struct OutputStream {
    let fd: Int32
    var data = Data()
    var isOpen = true

    init(fd: Int32) { self.fd = fd }

    var text: String { String(decoding: data, as: UTF8.self) }

    /// Reads what is there; end of file or an error closes the stream.
    mutating func readOnce() {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 && (errno == EINTR || errno == EAGAIN) { return }
        guard count > 0 else {
            isOpen = false
            return
        }
        let room = BoundedCommand.maxOutputBytes - data.count
        if room > 0 { data.append(contentsOf: buffer.prefix(min(room, count))) }
    }
}
