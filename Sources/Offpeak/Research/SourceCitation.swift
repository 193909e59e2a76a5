import Foundation

/// One research source behind an item's answer (issue 24, item 5), as its `index.json` entry lists
/// it: the URL the spec gave, when the copy in the prompt was fetched, its validators, and a
/// SHA-256 of the text the prompt holds (before a long page is cut to `ResearchSources.maxCharacters`).
///
/// Kept with the item's request (`RequestRecord.sources`) when the prompt is built, so outputs
/// written again later (`offpeak outputs`, any host) cite what the answer was asked from, not what
/// the cache holds by then.
struct SourceCitation: Codable, Sendable, Equatable {
    var url: String
    var fetchedAt: Date
    var etag: String?
    var lastModified: String?
    var sha256: String

    enum CodingKeys: String, CodingKey {
        case url, etag, sha256
        case fetchedAt = "fetched_at"
        case lastModified = "last_modified"
    }

    /// The citation of a cached copy, under the URL as the spec gave it.
    init(_ source: CachedSource, url: String) {
        self.url = url
        fetchedAt = source.fetchedAt
        etag = source.etag
        lastModified = source.lastModified
        sha256 = SHA256.hex(source.text)
    }

    /// Citations as a request keeps them (`StoredJSONList`); nil for none.
    static func stored(_ citations: [SourceCitation]) -> String? { StoredJSONList.text(citations) }

    /// What `stored` wrote; none for nil or text that does not decode (written by another offpeak).
    static func decoded(_ text: String?) -> [SourceCitation] { StoredJSONList.decoded(text) }
}
