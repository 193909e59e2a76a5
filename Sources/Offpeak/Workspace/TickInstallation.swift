import Foundation

/// What runs `offpeak tick` on a timer for one workspace: a crontab line, or a systemd user service
/// and timer. `offpeak cron` prints them for the user to install.
public struct TickInstallation: Sendable {
    /// The absolute path of the `offpeak` binary.
    var binary: String
    var workspace: Workspace
    /// Minutes between ticks, 1–60.
    var everyMinutes: Int
    /// The `--window` passed to `tick`, e.g. `240s`.
    var window: String

    /// - Throws: `OffpeakError` (usage) when `everyMinutes` is not 1–60 or `window` is not a duration.
    public init(binary: String, workspace: Workspace, everyMinutes: Int, window: String) throws(OffpeakError)
    {
        guard (1...60).contains(everyMinutes) else {
            throw OffpeakError(.usage, "--every: expected 1-60 minutes, got \(everyMinutes)")
        }
        guard let seconds = DurationParser.seconds(window), seconds > 0, seconds <= ValueLimits.window else {
            throw OffpeakError(
                .usage, "--window: expected a duration from 1s to 24h, like 240s or 4m, got '\(window)'")
        }
        self.binary = binary
        self.workspace = workspace
        self.everyMinutes = everyMinutes
        self.window = window
    }

    /// `offpeak-<folder name>`, with characters systemd does not allow in unit names replaced.
    var unitName: String {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.")
        let name = String(workspace.root.lastPathComponent.map { allowed.contains($0) ? $0 : "-" })
        return "offpeak-" + (name.isEmpty || name == "/" ? "workspace" : name)
    }

    /// `ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY`: the variables the registered
    /// providers read their keys from, as they declare them.
    static var keyNames: String {
        let names = ProviderKind.allCases.compactMap { $0.capabilities.environment.key }
        guard let last = names.last, names.count > 1 else { return names.first ?? "NAME_API_KEY" }
        return names.dropLast().joined(separator: ", ") + " or " + last
    }

    var root: String { workspace.root.path }
    var log: String { workspace.cacheDirectory.appendingPathComponent("tick.log").path }

    /// One crontab line: `cd` into the workspace, load the key file if there is one, tick, and append
    /// what it prints to `cache/tick.log`.
    var crontabLine: String {
        let schedule = everyMinutes == 60 ? "0 * * * *" : "*/\(everyMinutes) * * * *"
        let quote = { (text: String) in Self.shellQuoted(text).replacingOccurrences(of: "%", with: "\\%") }
        let env = "\"$HOME/.config/offpeak/env\""
        return "\(schedule) cd \(quote(root)) && mkdir -p cache && "
            + "if [ -r \(env) ]; then set -a; . \(env); set +a; fi; "
            + "OFFPEAK_WORKSPACE=\(quote(root)) \(quote(binary)) tick --workspace \(quote(root)) "
            + "--window \(quote(window)) >> \(quote(log)) 2>&1"
    }

    /// The systemd user service: one tick, where 75 ("come back later") counts as success.
    var serviceUnit: String {
        let quote = Self.systemdQuoted
        return """
            [Unit]
            Description=offpeak tick for \(root.replacingOccurrences(of: "%", with: "%%"))

            [Service]
            Type=oneshot
            WorkingDirectory=\(root.replacingOccurrences(of: "%", with: "%%"))
            Environment=\(quote("OFFPEAK_WORKSPACE=" + root))
            # API keys: a NAME=... line each in this file (chmod 600), NAME one of \(Self.keyNames).
            EnvironmentFile=-%h/.config/offpeak/env
            ExecStart=\(quote(binary)) tick --workspace \(quote(root)) --window \(quote(window))
            # 75: the run was interrupted or its window ended; it resumes on the next tick.
            SuccessExitStatus=75
            StandardOutput=append:\(log.replacingOccurrences(of: "%", with: "%%"))
            StandardError=append:\(log.replacingOccurrences(of: "%", with: "%%"))

            """
    }

    /// The systemd user timer; `Persistent=true` runs one missed tick after the machine was off.
    var timerUnit: String {
        let calendar = everyMinutes == 60 ? "hourly" : "*:0/\(everyMinutes)"
        return """
            [Unit]
            Description=Run offpeak tick every \(everyMinutes) minute\(everyMinutes == 1 ? "" : "s")

            [Timer]
            OnCalendar=\(calendar)
            Persistent=true
            Unit=\(unitName).service

            [Install]
            WantedBy=timers.target

            """
    }

    /// Both ways to install it, with where each piece goes.
    public var instructions: String {
        """
        # offpeak: run `offpeak tick` every \(everyMinutes) minute\(everyMinutes == 1 ? "" : "s") \
        for \(root)
        #
        # Keep API keys out of crontabs and unit files: put them in ~/.config/offpeak/env (chmod 600),
        # a NAME=... line each (\(Self.keyNames));
        # both set-ups below read that file.

        # --- Either: cron. Run `crontab -e` and add this line:
        \(crontabLine)

        # --- Or: systemd (user). Save as ~/.config/systemd/user/\(unitName).service
        \(serviceUnit)
        # --- and as ~/.config/systemd/user/\(unitName).timer
        \(timerUnit)
        # --- then enable it (and let it run while you are logged out):
        systemctl --user daemon-reload && systemctl --user enable --now \(unitName).timer
        loginctl enable-linger "$USER"

        """
    }

    /// `text` for `sh`: as is when it is plainly safe, else in single quotes.
    static func shellQuoted(_ text: String) -> String {
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=+@,")
        if !text.isEmpty, text.allSatisfy(safe.contains) { return text }
        return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// `text` for a systemd unit line: `%` doubled, and in double quotes when it holds spaces or quotes.
    static func systemdQuoted(_ text: String) -> String {
        let escaped = text.replacingOccurrences(of: "%", with: "%%")
        guard escaped.contains(where: { $0 == " " || $0 == "\"" || $0 == "\\" || $0 == "'" }) else {
            return escaped
        }
        let inner = escaped.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(
            of: "\"", with: "\\\"")
        return "\"" + inner + "\""
    }
}
