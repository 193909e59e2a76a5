import Foundation
import Synchronization

/// Asks NetworkManager, through its command line `nmcli`, which devices are metered.
///
/// nmcli rather than D-Bus: nmcli ships with NetworkManager wherever it runs (Debian's
/// `network-manager` package), its terse output is NetworkManager's documented interface for
/// scripts, and it needs no D-Bus library or system headers in offpeak's build. The price is one
/// short process per reading, so a run reuses an answer for `reuseSeconds` (conditions are checked
/// before every call).
///
/// Never hangs and never fails: nmcli gets `timeout` seconds, a C locale (so its words are not
/// translated) and no input; whatever goes wrong is an answer whose status says so, and sysfs then
/// decides alone.
final class NetworkManagerSource: Sendable {
    /// The nmcli found on `PATH`, or nil.
    let executable: URL?
    let environment: [String: String]
    let timeout: TimeInterval
    let reuseSeconds: TimeInterval
    private let cache = Mutex<(answer: NetworkManagerAnswer, at: Date)?>(nil)

    /// nmcli normally answers in tens of milliseconds; a busy laptop may take a few hundred.
    static let defaultTimeout: TimeInterval = 3
    static let defaultReuseSeconds: TimeInterval = 10
    static let arguments = ["--terse", "--fields", "GENERAL.DEVICE,GENERAL.METERED", "device", "show"]
    /// nmcli's exit status when NetworkManager is not running.
    static let notRunningStatus: Int32 = 8

    /// Finds `nmcli` in `environment`'s `PATH` (the first executable file named so).
    init(
        environment: [String: String], timeout: TimeInterval = defaultTimeout,
        reuseSeconds: TimeInterval = defaultReuseSeconds
    ) {
        let folders = (environment["PATH"] ?? "").split(separator: ":").map(String.init)
        executable = folders.lazy.map { URL(fileURLWithPath: $0).appendingPathComponent("nmcli") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
        var childEnvironment = environment
        childEnvironment["LC_ALL"] = "C"
        self.environment = childEnvironment
        self.timeout = timeout
        self.reuseSeconds = reuseSeconds
    }

    /// The command line as `offpeak conditions` shows it.
    var command: String { "nmcli " + Self.arguments.joined(separator: " ") }

    /// NetworkManager's answer, asked now or reused from the last `reuseSeconds`.
    func read(now: Date = Date()) -> NetworkManagerAnswer {
        if let cached = cache.withLock({ $0 }), now >= cached.at,
            now.timeIntervalSince(cached.at) < reuseSeconds
        {
            return cached.answer
        }
        let answer = ask()
        cache.withLock { $0 = (answer, now) }
        return answer
    }

    private func ask() -> NetworkManagerAnswer {
        guard let executable else {
            return NetworkManagerAnswer(
                status: .absent, command: command,
                why: "No nmcli on PATH, so NetworkManager is not asked; sysfs decides.")
        }
        let run = BoundedCommand(
            executable: executable, arguments: Self.arguments, environment: environment, timeout: timeout)
        switch run.run() {
        case .couldNotStart(let reason):
            return failed("\(executable.path) could not be started (\(Self.oneLine(reason)))")
        case .timedOut:
            return failed("nmcli did not answer within \(Int(timeout)) s and was stopped")
        case .exited(let status, let stdout, let stderr):
            if status == Self.notRunningStatus || stderr.contains("NetworkManager is not running") {
                return NetworkManagerAnswer(
                    status: .notRunning, command: command,
                    why: "nmcli says NetworkManager is not running; sysfs decides.")
            }
            guard status == 0 else {
                let said = Self.oneLine(stderr)
                return failed("nmcli exited with status \(status)\(said.isEmpty ? "" : ": \(said)")")
            }
            let (devices, skipped) = NetworkManagerAnswer.parse(stdout)
            if devices.isEmpty && skipped > 0 {
                return failed("nmcli printed nothing offpeak understood (\(skipped) lines)")
            }
            let ignored = skipped > 0 ? " (\(skipped) lines not understood were skipped)" : ""
            return NetworkManagerAnswer(
                status: .running, command: command, devices: devices,
                why: "NetworkManager listed \(devices.count) devices\(ignored).")
        }
    }

    private func failed(_ what: String) -> NetworkManagerAnswer {
        NetworkManagerAnswer(status: .failed, command: command, why: "\(what); sysfs decides.")
    }

    /// The first line, redacted and at most 120 characters: nmcli's stderr is text from outside.
    static func oneLine(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        let clean = Redactor.shapes.redact(line).trimmingCharacters(in: .whitespaces)
        return clean.count > 120 ? String(clean.prefix(117)) + "..." : clean
    }
}
