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
    /// The nmcli to run: `$OFFPEAK_NMCLI` when set, else the first on `PATH`; nil when there is
    /// none, or `OFFPEAK_NMCLI` is set empty (NetworkManager is then not asked).
    let executable: URL?
    /// Why `executable` is nil, in words `offpeak conditions` shows.
    private let missing: String
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

    /// The variable that names the nmcli to run, or, set empty, keeps NetworkManager out: for a
    /// machine whose NetworkManager should not decide, and for tests on a machine where it runs.
    static let variable = "OFFPEAK_NMCLI"

    /// Finds `nmcli`: `$OFFPEAK_NMCLI`, else in `environment`'s `PATH` (the first executable file
    /// named so).
    init(
        environment: [String: String], timeout: TimeInterval = defaultTimeout,
        reuseSeconds: TimeInterval = defaultReuseSeconds
    ) {
        if let named = environment[Self.variable] {
            executable = named.isEmpty ? nil : URL(fileURLWithPath: named)
            missing = "\(Self.variable) is empty, so NetworkManager is not asked; sysfs decides."
        } else {
            let folders = (environment["PATH"] ?? "").split(separator: ":").map(String.init)
            executable = folders.lazy.map { URL(fileURLWithPath: $0).appendingPathComponent("nmcli") }
                .first { FileManager.default.isExecutableFile(atPath: $0.path) }
            missing = "No nmcli on PATH, so NetworkManager is not asked; sysfs decides."
        }
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
            return NetworkManagerAnswer(status: .absent, command: command, why: missing)
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
