import Foundation

/// What `offpeak hosts` shows: every host that has ticked against the store, by name, with its
/// offpeak version, its last tick (when it started, how it exited), the runs it holds, its calls
/// in flight and the conditions it read as its last tick started.
public struct HostReport: Sendable, Encodable {
    struct Line: Sendable, Equatable, Encodable {
        var name: String
        var version: String
        var firstSeenAt: Date
        var lastTickStartedAt: Date
        /// Nil while the tick runs, or when it never ended (killed; the store out of reach).
        var lastTickEndedAt: Date?
        var lastTickStatus: Int32?
        var runsHeld: Int
        var callsInFlight: Int
        var conditions: String

        init(_ record: HostRecord) {
            name = record.name
            version = record.version
            firstSeenAt = record.firstSeenAt
            lastTickStartedAt = record.tickStartedAt
            lastTickEndedAt = record.tickEndedAt
            lastTickStatus = record.tickStatus
            runsHeld = record.runsHeld
            callsInFlight = record.callsInFlight
            conditions = record.conditions
        }

        enum CodingKeys: String, CodingKey {
            case name, version, firstSeenAt, lastTickStartedAt, lastTickEndedAt, lastTickStatus, runsHeld
            case callsInFlight, conditions
        }

        /// Every key, always: a tick not ended is `null`, not a missing key.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try container.encode(version, forKey: .version)
            try container.encode(firstSeenAt, forKey: .firstSeenAt)
            try container.encode(lastTickStartedAt, forKey: .lastTickStartedAt)
            try container.encode(lastTickEndedAt, forKey: .lastTickEndedAt)
            try container.encode(lastTickStatus, forKey: .lastTickStatus)
            try container.encode(runsHeld, forKey: .runsHeld)
            try container.encode(callsInFlight, forKey: .callsInFlight)
            try container.encode(conditions, forKey: .conditions)
        }

        /// "0", "75", or "not ended" while the tick has not ended.
        var statusCell: String { lastTickStatus.map(String.init) ?? "not ended" }
    }

    var hosts: [Line]

    public static func make(store: Store, now: Date) throws(OffpeakError) -> HostReport {
        HostReport(hosts: try store.hosts.hosts(now: now).map(Line.init).sorted { $0.name < $1.name })
    }

    /// The list alone, as `--json` prints it.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hosts)
    }

    public var text: String {
        if hosts.isEmpty { return "no host has ticked on this store yet\n" }
        let table = TextTable(columns: [
            "HOST", "VERSION", "LAST TICK", "STATUS", "RUNS HELD", "CALLS IN FLIGHT", "CONDITIONS",
        ])
        for host in hosts {
            table.add([
                host.name, host.version, ReportFormat.date(host.lastTickStartedAt), host.statusCell,
                "\(host.runsHeld)", "\(host.callsInFlight)", host.conditions,
            ])
        }
        return table.render()
    }
}
