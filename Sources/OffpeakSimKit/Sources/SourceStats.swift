/// The `sources` row of `/sim/stats`: how often research sources were asked for, so a test can
/// tell a cache hit (no request) from a revalidation (a `304`) from a download.
public struct SourceStats: Sendable, Equatable, Codable {
    /// Requests for a document (`/sources/{name}`, `/sources/binary/{name}`), whatever the answer;
    /// a redirect is not counted, the request it leads to is.
    public var fetches = 0
    /// Of those, the ones answered `304 Not Modified`.
    public var notModified = 0
    /// Requests for `/robots.txt`, whatever the answer; not among `fetches`. Left out of the JSON
    /// while none was made, so the row reads as it did before the sim served one.
    public var robots = 0

    public init(fetches: Int = 0, notModified: Int = 0, robots: Int = 0) {
        self.fetches = fetches
        self.notModified = notModified
        self.robots = robots
    }

    enum CodingKeys: String, CodingKey {
        case fetches, robots
        case notModified = "not_modified"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        fetches = try container.decode(Int.self, forKey: .fetches)
        notModified = try container.decode(Int.self, forKey: .notModified)
        robots = try container.decodeIfPresent(Int.self, forKey: .robots) ?? 0
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(fetches, forKey: .fetches)
        try container.encode(notModified, forKey: .notModified)
        if robots > 0 { try container.encode(robots, forKey: .robots) }
    }
}
