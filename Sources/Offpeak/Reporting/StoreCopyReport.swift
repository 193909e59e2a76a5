import Foundation

/// What `offpeak store copy` prints: both stores, the rows of every table, and how to use the copy.
public struct StoreCopyReport: Sendable, Encodable {
    let outcome: StoreCopyOutcome

    public init(_ outcome: StoreCopyOutcome) { self.outcome = outcome }

    public var text: String {
        let table = TextTable(columns: ["TABLE", "ROWS"])
        for copied in outcome.tables { table.add([copied.name, String(copied.rows)]) }
        let use =
            outcome.setting == "sqlite"
            ? "to use it: remove store: from offpeak.yaml (or write store: sqlite) and unset OFFPEAK_STORE"
            : "to use it: store: \(outcome.setting) in offpeak.yaml, or OFFPEAK_STORE=\(outcome.setting)"
        return "copied \(outcome.from)\n    to \(outcome.to)\n" + table.render() + use + "\n"
            + "\(outcome.from) is marked moved: a run, submit or tick still pointed at it writes nothing "
            + "there and says where the store went\n"
    }

    enum CodingKeys: String, CodingKey { case from, to, store, tables }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(outcome.from, forKey: .from)
        try container.encode(outcome.to, forKey: .to)
        try container.encode(outcome.setting, forKey: .store)
        try container.encode(
            Dictionary(uniqueKeysWithValues: outcome.tables.map { ($0.name, $0.rows) }), forKey: .tables)
    }
}
