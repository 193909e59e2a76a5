import Foundation

/// What NetworkManager said about metering, device by device, or why it said nothing.
///
/// NetworkManager knows things sysfs cannot: a laptop on a phone's WiFi hotspot reads as WiFi in
/// `/sys`, while NetworkManager marks the device metered (the hotspot's DHCP answer carries
/// `ANDROID_METERED`, or the user flagged the connection). Its `Metered` device property is one of
/// `yes`, `no`, `guess-yes`, `guess-no` and `unknown`.
struct NetworkManagerAnswer: Sendable, Equatable {
    /// Whether the answer could be used.
    enum Status: String, Sendable, Equatable, Encodable {
        /// nmcli answered; `devices` holds what it said.
        case running
        /// No `nmcli` on `PATH`: NetworkManager is not installed (or not for this user).
        case absent
        /// nmcli says NetworkManager is not running (exit status 8).
        case notRunning = "not running"
        /// nmcli failed, timed out, or printed nothing offpeak understood.
        case failed
    }

    /// NetworkManager's `Metered` device property (NMMetered).
    enum Metered: String, Sendable, Equatable, Encodable {
        case yes, no, guessYes = "guess-yes", guessNo = "guess-no", unknown

        /// Parses nmcli's words (`yes`, `no`, `yes (guessed)`, `no (guessed)`, `unknown`), and the
        /// D-Bus names too; nil for anything else.
        init?(nmcli text: String) {
            switch text.trimmingCharacters(in: .whitespaces) {
            case "yes": self = .yes
            case "no": self = .no
            case "yes (guessed)", "guess-yes": self = .guessYes
            case "no (guessed)", "guess-no": self = .guessNo
            case "unknown": self = .unknown
            default: return nil
            }
        }

        /// What offpeak makes of it: `true` metered, `false` unmetered, nil no firm word, so sysfs
        /// decides. `guess-yes` counts as metered (a wrong "metered" only defers work, a wrong
        /// "unmetered" spends someone's data plan); `guess-no` is only NetworkManager's default
        /// for a link it has no reason to suspect, no better than offpeak's own default from the
        /// link's kind, so, like `unknown`, it leaves the decision to sysfs.
        var decision: Bool? {
            switch self {
            case .yes, .guessYes: return true
            case .no: return false
            case .guessNo, .unknown: return nil
            }
        }
    }

    /// One device as nmcli listed it.
    struct Device: Sendable, Equatable, Encodable {
        var name: String
        var metered: Metered
    }

    var status: Status
    /// The command that was run, or would have been.
    var command: String
    var devices: [Device]
    /// One sentence: what happened, for `offpeak conditions`.
    var why: String

    init(status: Status, command: String, devices: [Device] = [], why: String) {
        self.status = status
        self.command = command
        self.devices = devices
        self.why = why
    }

    /// What NetworkManager says about the interface `name`, if it listed it.
    func metered(_ name: String) -> Metered? {
        devices.first { $0.name == name }?.metered
    }

    /// Parses `nmcli --terse --fields GENERAL.DEVICE,GENERAL.METERED device show`: per device a
    /// `GENERAL.DEVICE:NAME` line then a `GENERAL.METERED:VALUE` line, devices separated by blank
    /// lines; terse values escape `:` and `\` with `\`. Lines that fit none of this, a metered
    /// line before any device, and values that are not a known `Metered` word are skipped and
    /// counted in `skipped`; a device without a metered line counts as `unknown`.
    static func parse(_ output: String) -> (devices: [Device], skipped: Int) {
        var devices: [Device] = []
        var skipped = 0
        for line in output.split(whereSeparator: \.isNewline) where !line.allSatisfy(\.isWhitespace) {
            guard let colon = line.firstIndex(of: ":") else {
                skipped += 1
                continue
            }
            let field = line[..<colon].trimmingCharacters(in: .whitespaces)
            let value = unescape(line[line.index(after: colon)...])
            switch field {
            case "GENERAL.DEVICE" where !value.isEmpty:
                devices.append(Device(name: value, metered: .unknown))
            case "GENERAL.METERED" where !devices.isEmpty:
                if let metered = Metered(nmcli: value) {
                    devices[devices.count - 1].metered = metered
                } else {
                    skipped += 1
                }
            default:
                skipped += 1
            }
        }
        return (devices, skipped)
    }

    /// Undoes nmcli's terse escaping: `\:` is `:` and `\\` is `\`.
    private static func unescape(_ text: Substring) -> String {
        var out = ""
        var escaped = false
        for character in text {
            if escaped || character != "\\" {
                out.append(character)
                escaped = false
            } else {
                escaped = true
            }
        }
        return out
    }
}

extension NetworkManagerAnswer: Encodable {
    enum CodingKeys: String, CodingKey {
        case status, command, devices, why
    }
}
