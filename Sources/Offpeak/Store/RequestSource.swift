/// Where a request came from: `requests.source`.
///
/// The raw values are what the store holds, and the v6 triggers and partial indexes spell them in
/// SQL (`StoreMigrations+Scale.swift`, `Store.specOrStepSQL`): a case is never renamed.
enum RequestSource: String, Codable, Sendable, CaseIterable {
    /// An item of the job's spec.
    case spec
    /// A line given to `offpeak submit`.
    case submit
    /// A file taken from the job's spool folder.
    case spool
    /// A long document's map step: the summary of one chunk (see `LongDocumentPlanner`).
    case chunk
    /// A long document's reduce step below the final one.
    case reduce

    /// Step rows are work towards an item, not items: outputs and counts leave them out.
    static let steps: Set<RequestSource> = [.chunk, .reduce]

    var isStep: Bool { Self.steps.contains(self) }
}
