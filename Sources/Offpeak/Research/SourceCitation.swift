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

    /// Citations as a request keeps them: JSON with sorted keys and whole-second UTC times; nil for none.
    static func stored(_ citations: [SourceCitation]) -> String? {
        guard !citations.isEmpty, let data = try? encoder.encode(citations) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// What `stored` wrote; none for nil or text that does not decode (written by another offpeak).
    static func decoded(_ text: String?) -> [SourceCitation] {
        guard let text else { return [] }
        return (try? decoder.decode([SourceCitation].self, from: Data(text.utf8))) ?? []
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}
