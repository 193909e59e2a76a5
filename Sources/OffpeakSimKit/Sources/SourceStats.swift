/// The `sources` row of `/sim/stats`: how often research sources were asked for, so a test can
/// tell a cache hit (no request) from a revalidation (a `304`) from a download.
public struct SourceStats: Sendable, Equatable, Codable {
    /// Requests for a document (`/sources/{name}`, `/sources/binary/{name}`), whatever the answer;
    /// a redirect is not counted, the request it leads to is.
    public var fetches = 0
    /// Of those, the ones answered `304 Not Modified`.
    public var notModified = 0

    public init(fetches: Int = 0, notModified: Int = 0) {
        self.fetches = fetches
        self.notModified = notModified
    }

    enum CodingKeys: String, CodingKey {
        case fetches
        case notModified = "not_modified"
    }
}
