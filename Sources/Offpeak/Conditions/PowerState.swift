import Foundation

/// The machine's power, decided from `class/power_supply` and `firmware/acpi/platform_profile`
/// (the kernel's sysfs-class-power ABI) with systemd's `ConditionACPower` rule.
struct PowerState: Sendable, Equatable {
    /// On external power: a non-Battery supply is online, or no system battery is discharging.
    var onAC: Bool
    /// The system battery's charge (0-100), nil when there is none or it is unknown.
    var batteryPercent: Int?
    /// The charge is known and at most `lowBatteryPercent` (unknown counts as not low).
    var batteryLow: Bool
    /// The firmware's platform profile asks for low power (`low-power`, `quiet` or `cool`).
    var lowPower: Bool
    /// One sentence: why `onAC` is what it is.
    var why: String
    /// Every file read, with what it meant.
    var readings: [Reading]
    /// The first file the decision needed that could not be read: then nothing above is known,
    /// and whatever needs power must wait (`ConditionGate`) or say so (`MachineConditions.error`).
    var failure: SysfsFailure?

    /// WorkManager's "battery not low" threshold: at or below this the battery is low.
    static let lowBatteryPercent = 15
    /// Platform profiles that mean the user asked for low power.
    static let lowPowerProfiles: Set<String> = ["low-power", "quiet", "cool"]

    init(
        onAC: Bool, batteryPercent: Int? = nil, batteryLow: Bool = false, lowPower: Bool = false,
        why: String = "", readings: [Reading] = [], failure: SysfsFailure? = nil
    ) {
        self.onAC = onAC
        self.batteryPercent = batteryPercent
        self.batteryLow = batteryLow
        self.lowPower = lowPower
        self.why = why
        self.readings = readings
        self.failure = failure
    }

    /// Power that could not be read at all (the sysfs root itself failed).
    static func unknown(_ failure: SysfsFailure) -> PowerState {
        PowerState(onAC: false, why: failure.sentence, failure: failure)
    }

    /// Reads the power state under `sysfsRoot` (normally `/sys`). A file that is there but cannot
    /// be read (no permission, an I/O error, a folder where a file should be) sets `failure` and
    /// the state is unknown; for files that are missing or that the kernel says have no value
    /// (`SysfsValue`) the fallbacks are:
    /// - no `class/power_supply` folder, or no supplies: on AC (a desktop or server);
    /// - a supply whose `type` is missing, has no value or is empty: ignored (systemd does the same);
    /// - a non-Battery supply's `online` missing or not a number: not online;
    /// - a battery's `scope` missing: a system battery; `present` missing or garbage: present;
    /// - a battery's `status` missing, without a value or anything but `Discharging`: not discharging
    ///   (so `Not charging` at a charge limit, `Full` and `Unknown` count as AC);
    /// - `capacity` missing, not a number or outside 0-100: percent unknown, battery not low; with
    ///   several system batteries the first (by name) with a valid capacity gives the percent;
    /// - `platform_profile` missing, without a value or any other value: not low power.
    static func read(sysfsRoot: URL) -> PowerState {
        let tree = SysfsTree(root: sysfsRoot)
        var readings: [Reading] = []
        var failure: SysfsFailure?
        var failed: Set<String> = []
        /// Reads one file, keeping those that could not be read.
        func read(_ file: String) -> SysfsValue {
            let value = tree.read(file)
            if let unread = tree.failure(file, value) {
                failure = failure ?? unread
                failed.insert(file)
            }
            return value
        }
        var onlineSupply: String?
        var dischargingBattery: String?
        var percent: Int?
        var systemBatteries = 0

        let folder = "class/power_supply"
        var names: [String] = []
        switch tree.entries(folder) {
        case .missing:
            readings.append(
                Reading(
                    file: folder, value: "missing",
                    rule: "No power supply class: no battery, so the machine counts as on AC."))
        case .failed(let reason):
            failure = SysfsFailure(path: tree.path(folder), reason: reason)
            readings.append(
                Reading(
                    file: folder, value: SysfsValue.failed(reason).shown,
                    rule: "The supplies cannot be listed: power is unknown."))
        case .names(let listed):
            names = listed
            if listed.isEmpty {
                readings.append(
                    Reading(
                        file: folder, value: "empty",
                        rule: "No power supplies: no battery, so the machine counts as on AC."))
            }
        }
        for name in names {
            let base = "\(folder)/\(name)"
            let type = read("\(base)/type")
            guard let typeName = type.string, !typeName.isEmpty else {
                readings.append(
                    Reading(
                        file: "\(base)/type", value: type.shown,
                        rule: "A supply of unknown type is ignored."))
                continue
            }
            guard typeName == "Battery" else {
                let online = read("\(base)/online")
                let isOnline = (online.integer ?? 0) > 0
                if isOnline && onlineSupply == nil { onlineSupply = name }
                readings.append(
                    Reading(
                        file: "\(base)/online", value: online.shown,
                        rule: isOnline
                            ? "A \(typeName) supply that is online means external power."
                            : "A \(typeName) supply that is not online (0, missing or garbage) gives no power."
                    ))
                continue
            }
            let scope = read("\(base)/scope")
            if scope.string == "Device" {
                readings.append(
                    Reading(
                        file: "\(base)/scope", value: scope.shown,
                        rule: "A peripheral's battery (scope Device) is ignored."))
                continue
            }
            let present = read("\(base)/present")
            if present.string == "0" {
                readings.append(
                    Reading(
                        file: "\(base)/present", value: present.shown,
                        rule: "An absent battery (present 0) is ignored."))
                continue
            }
            systemBatteries += 1
            let status = read("\(base)/status")
            let discharging = status.string == "Discharging"
            if discharging && dischargingBattery == nil { dischargingBattery = name }
            readings.append(
                Reading(
                    file: "\(base)/status", value: status.shown,
                    rule: discharging
                        ? "A system battery that is discharging means on battery unless a supply is online."
                        : "A system battery that is not discharging does not mean on battery."))
            let capacity = read("\(base)/capacity")
            let value = capacity.integer.flatMap { (0...100).contains($0) ? $0 : nil }
            let used = value != nil && percent == nil
            if used { percent = value }
            readings.append(
                Reading(
                    file: "\(base)/capacity", value: capacity.shown,
                    rule: value == nil
                        ? "Not a percentage from 0 to 100: the charge is unknown (not low)."
                        : used
                            ? "The charge of the system battery."
                            : "Another system battery's charge; the first one's is reported."))
        }

        let profileFile = "firmware/acpi/platform_profile"
        let profile = read(profileFile)
        let lowPower = profile.string.map { lowPowerProfiles.contains($0) } ?? false
        readings.append(
            Reading(
                file: profileFile, value: profile.shown,
                rule: lowPower
                    ? "A low-power platform profile is selected."
                    : "Not low-power, quiet or cool: no low-power profile."))

        let onAC: Bool
        let why: String
        if let onlineSupply {
            onAC = true
            why = "The \(onlineSupply) supply is online."
        } else if let dischargingBattery {
            onAC = false
            why = "No external supply is online and \(dischargingBattery) is discharging."
        } else if systemBatteries == 0 {
            onAC = true
            why = "There is no system battery (a desktop or server), which counts as AC."
        } else {
            onAC = true
            why = "No system battery is discharging (plugged in, full or held at a charge limit)."
        }
        let low = percent.map { $0 <= lowBatteryPercent } ?? false
        readings = readings.map { reading in
            guard failed.contains(reading.file) else { return reading }
            return Reading(
                file: reading.file, value: reading.value, rule: "Cannot be read, so power is unknown.")
        }
        return PowerState(
            onAC: onAC, batteryPercent: percent, batteryLow: low, lowPower: lowPower,
            why: failure?.sentence ?? why, readings: readings, failure: failure)
    }
}

extension PowerState: Encodable {
    enum CodingKeys: String, CodingKey {
        case onAC = "on_ac"
        case batteryPercent = "battery_percent"
        case batteryLow = "battery_low"
        case lowPower = "low_power"
        case why, error
    }

    /// The decisions only (`battery_percent` is null when unknown); the readings are listed once, by
    /// `MachineConditions`. When a file could not be read every decision is null and `error` says
    /// which file (the key is left out otherwise).
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let known = failure == nil
        try container.encode(known ? onAC : nil, forKey: .onAC)
        try container.encode(known ? batteryPercent : nil, forKey: .batteryPercent)
        try container.encode(known ? batteryLow : nil, forKey: .batteryLow)
        try container.encode(known ? lowPower : nil, forKey: .lowPower)
        try container.encode(why, forKey: .why)
        try container.encodeIfPresent(failure?.description, forKey: .error)
    }
}
