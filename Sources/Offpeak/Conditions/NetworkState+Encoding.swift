import Foundation

/// How `offpeak conditions --json` shows the network.
extension NetworkState: Encodable {
    enum CodingKeys: String, CodingKey {
        case online, unmetered, interfaces, why
        case decidedBy = "decided_by"
        case meteredBy = "metered_by"
        case networkManager = "network_manager"
        case error
    }

    /// Which source decided each interface's `metered`.
    struct MeteredBy: Encodable {
        var name: String
        var source: MeteredRule.Source
    }

    /// The decisions only; the readings are listed once, by `MachineConditions`. `decided_by` is
    /// the source behind `unmetered`, `metered_by` each interface's, and `network_manager` what
    /// NetworkManager said (null when it was not asked). When a file could not be read `online` and
    /// `unmetered` are null and `error` says which file (the key is left out otherwise).
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(failure == nil ? online : nil, forKey: .online)
        try container.encode(failure == nil ? unmetered : nil, forKey: .unmetered)
        try container.encode(interfaces, forKey: .interfaces)
        try container.encode(why, forKey: .why)
        try container.encode(decidedBy, forKey: .decidedBy)
        try container.encode(
            interfaces.map { MeteredBy(name: $0.name, source: $0.meteredBy) }, forKey: .meteredBy)
        try container.encode(networkManager, forKey: .networkManager)
        try container.encodeIfPresent(failure?.description, forKey: .error)
    }
}
