import Foundation

/// What `offpeak batches` shows: provider batches, most recently prepared first, each with the
/// host that sent it, from the store alone (what the provider said at the last poll; the provider
/// is not called).
public struct BatchReport: Sendable, Encodable {
    var batches: [BatchLine]
    /// Whether collected and failed batches are listed too (`--all`).
    var all: Bool
    /// Batches left out by the limit (`--all` only: every open batch is always listed).
    var notShown: Int

    /// How many batches `--all` lists unless told otherwise.
    public static let defaultLimit = 50

    /// - Parameters:
    ///   - all: every batch, not only those still out.
    ///   - limit: with `all`, at most this many.
    public static func make(store: Store, all: Bool, limit: Int = defaultLimit) throws(OffpeakError)
        -> BatchReport
    {
        let listings = try store.batches.batchListings(all: all, limit: all ? max(0, limit) : nil)
        let notShown = all ? max(0, try store.batches.batchCount() - listings.count) : 0
        return BatchReport(batches: listings.map(BatchLine.init), all: all, notShown: notShown)
    }

    /// The list alone, as `--json` prints it.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(batches)
    }

    public var text: String {
        if batches.isEmpty {
            return all ? "no provider batches yet\n" : "no provider batches out\n"
        }
        let table = TextTable(columns: [
            "BATCH", "JOB", "RUN", "HOST", "PROVIDER", "PROVIDER ID", "STATE", "PROVIDER STATE", "ITEMS",
            "REQUESTS",
            "PROGRESS", "WORST", "PREPARED", "SUBMITTED", "EXPIRES",
        ])
        for line in batches {
            table.add([
                line.id, line.job, line.run, line.host ?? "-", line.provider, line.remoteIdCell,
                line.state.rawValue,
                line.remoteStatusCell,
                "\(line.items)", "\(line.requests)", line.progressCell, Money.dollars(line.worstDollars),
                BatchLine.time(line.preparedAt), BatchLine.time(line.submittedAt),
                BatchLine.time(line.expiresAt),
            ])
        }
        var out = table.render()
        if notShown > 0 {
            out += "\(Plural.count(notShown, "older batch", "older batches")) not shown (--limit)\n"
        }
        return out + BatchLine.failingText(batches)
    }
}
