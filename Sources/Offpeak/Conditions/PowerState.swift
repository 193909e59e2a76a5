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

    /// WorkManager's "battery not low" threshold: at or below this the battery is low.
    static let lowBatteryPercent = 15
    /// Platform profiles that mean the user asked for low power.
    static let lowPowerProfiles: Set<String> = ["low-power", "quiet", "cool"]

    init(
        onAC: Bool, batteryPercent: Int? = nil, batteryLow: Bool = false, lowPower: Bool = false,
        why: String = "", readings: [Reading] = []
    ) {
        self.onAC = onAC
        self.batteryPercent = batteryPercent
        self.batteryLow = batteryLow
        self.lowPower = lowPower
        self.why = why
        self.readings = readings
    }

    /// Reads the power state under `sysfsRoot` (normally `/sys`). Never fails; fallbacks:
    /// - no `class/power_supply` folder, or no supplies: on AC (a desktop or server);
    /// - a supply whose `type` is missing, unreadable or empty: ignored (systemd does the same);
    /// - a non-Battery supply's `online` missing or not a number: not online;
    /// - a battery's `scope` missing: a system battery; `present` missing or garbage: present;
    /// - a battery's `status` missing, unreadable or anything but `Discharging`: not discharging
    ///   (so `Not charging` at a charge limit, `Full` and `Unknown` count as AC);
    /// - `capacity` missing, not a number or outside 0-100: percent unknown, battery not low; with
    ///   several system batteries the first (by name) with a valid capacity gives the percent;
    /// - `platform_profile` missing, unreadable or any other value: not low power.
    static func read(sysfsRoot: URL) -> PowerState {
        let tree = SysfsTree(root: sysfsRoot)
        var readings: [Reading] = []
        var onlineSupply: String?
        var dischargingBattery: String?
        var percent: Int?
        var systemBatteries = 0

        let folder = "class/power_supply"
        let names = tree.entries(folder)
        if names == nil {
            readings.append(
                Reading(
                    file: folder, value: "missing",
                    rule: "No power supply class: no battery, so the machine counts as on AC."))
        } else if names?.isEmpty == true {
            readings.append(
                Reading(
                    file: folder, value: "empty",
                    rule: "No power supplies: no battery, so the machine counts as on AC."))
        }
        for name in names ?? [] {
            let base = "\(folder)/\(name)"
            let type = tree.read("\(base)/type")
            guard let typeName = type.string, !typeName.isEmpty else {
                readings.append(
                    Reading(
                        file: "\(base)/type", value: type.shown,
                        rule: "A supply of unknown type is ignored."))
                continue
            }
            guard typeName == "Battery" else {
                let online = tree.read("\(base)/online")
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
            let scope = tree.read("\(base)/scope")
            if scope.string == "Device" {
                readings.append(
                    Reading(
                        file: "\(base)/scope", value: scope.shown,
                        rule: "A peripheral's battery (scope Device) is ignored."))
                continue
            }
            let present = tree.read("\(base)/present")
            if present.string == "0" {
                readings.append(
                    Reading(
                        file: "\(base)/present", value: present.shown,
                        rule: "An absent battery (present 0) is ignored."))
                continue
            }
            systemBatteries += 1
            let status = tree.read("\(base)/status")
            let discharging = status.string == "Discharging"
            if discharging && dischargingBattery == nil { dischargingBattery = name }
            readings.append(
                Reading(
                    file: "\(base)/status", value: status.shown,
                    rule: discharging
                        ? "A system battery that is discharging means on battery unless a supply is online."
                        : "A system battery that is not discharging does not mean on battery."))
            let capacity = tree.read("\(base)/capacity")
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
        let profile = tree.read(profileFile)
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
        return PowerState(
            onAC: onAC, batteryPercent: percent, batteryLow: low, lowPower: lowPower, why: why,
            readings: readings)
    }
}

extension PowerState: Encodable {
    enum CodingKeys: String, CodingKey {
        case onAC = "on_ac"
        case batteryPercent = "battery_percent"
        case batteryLow = "battery_low"
        case lowPower = "low_power"
        case why
    }

    /// The decisions only (`battery_percent` is null when unknown); the readings are listed once, by
    /// `MachineConditions`.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(onAC, forKey: .onAC)
        try container.encode(batteryPercent, forKey: .batteryPercent)
        try container.encode(batteryLow, forKey: .batteryLow)
        try container.encode(lowPower, forKey: .lowPower)
        try container.encode(why, forKey: .why)
    }
}
