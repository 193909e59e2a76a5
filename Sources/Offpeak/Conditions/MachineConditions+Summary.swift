import Foundation

extension MachineConditions {
    /// Power and network in one line ("on battery (42 %); online, metered (wwan0)"), as `offpeak
    /// queue` shows them and `offpeak hosts` shows each host's; "conditions unknown: cannot read …"
    /// when either could not be read.
    var summary: String {
        if let failure {
            return "\(ConditionGate.Reason.unknown.rawValue): \(failure.description)"
        }
        var power = self.power.onAC ? "on AC" : "on battery"
        if let percent = self.power.batteryPercent { power += " (\(percent) %)" }
        if self.power.lowPower { power += ", low-power profile" }
        let counted = network.interfaces.filter(\.counts).map(\.name)
        let network: String
        if !self.network.online {
            network = "offline"
        } else {
            network =
                (self.network.unmetered ? "online, unmetered" : "online, metered")
                + " (\(counted.joined(separator: ", ")))"
        }
        return "\(power); \(network)"
    }
}
