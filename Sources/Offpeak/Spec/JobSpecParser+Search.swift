import Foundation
import Yams

/// `search: {queries: […], max_uses: N}` on a research job or one of its items (issue 24, item 4).
extension JobSpecParser {
    static let searchFields = ["queries", "max_uses"]

    /// A `search` mapping: its queries (templates) and `max_uses` (1 to `ValueLimits.searchUses`,
    /// default `JobSpec.Search.defaultMaxUses`).
    /// - Throws: a located error for anything but such a mapping, an empty query or a query that
    ///   is not a template.
    static func search(_ node: Node, at field: String, reader: YAMLNodeReader) throws(OffpeakError)
        -> JobSpec.Search
    {
        let mapping = try reader.mapping(node, at: field, allowed: searchFields)
        var search = JobSpec.Search(
            maxUses: try mapping.wholeNumber("max_uses", in: 1...ValueLimits.searchUses)
                ?? JobSpec.Search.defaultMaxUses)
        for (index, (text, element)) in (try mapping.strings("queries") ?? []).enumerated() {
            let place = "\(mapping.path("queries"))[\(index + 1)]"
            guard !text.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw reader.error(place, "expected a search query, got an empty string", at: element)
            }
            do { search.queries.append(try Template(text)) } catch {
                throw reader.error(place, "not a template: \(error)", at: element)
            }
        }
        return search
    }

    /// Checks the spec's searches against the rest of it: only a research job searches, and not
    /// one that takes submitted requests (asked as submitted); a query names only variables every
    /// item that asks it has; and since an answer from the web can change while its prompt does
    /// not, such a job reuses answers by their TTL (`reuse: ttl`, set here when the spec says
    /// nothing, refused when it says `unchanged`).
    static func checkSearches(
        _ spec: inout JobSpec, root: YAMLMapping, items: [LocatedItem]
    ) throws(OffpeakError) {
        let reader = root.reader
        let searching = items.filter { $0.item.search != nil }
        guard spec.search != nil || !searching.isEmpty else { return }
        let place = spec.search != nil ? "search" : "\(searching[0].field).search"
        let node = root.value("search") ?? searching.first?.node
        guard spec.kind == .research else {
            throw reader.error(
                place, "only a research job searches the web (this job is kind '\(spec.kind.rawValue)')",
                at: node)
        }
        if spec.acceptsSubmissions {
            throw reader.error(
                place,
                "a job that takes submitted requests (queue: true) cannot search the web: a submitted "
                    + "request is asked as it was submitted; give the search to a job without 'queue'",
                at: node)
        }
        if spec.reuse == .unchanged {
            throw reader.error(
                "reuse",
                "a job that searches the web cannot reuse answers while their prompt is unchanged (its "
                    + "answers rest on pages the prompt does not hold); remove 'reuse' or set it to 'ttl'",
                at: root.value("reuse"))
        }
        spec.reuse = .ttl
        func check(
            _ search: JobSpec.Search?, has variables: Set<String>, field: String, who: String, node: Node?
        ) throws(OffpeakError) {
            for query in search?.queries ?? [] {
                if let missing = query.variables.sorted().first(where: { !variables.contains($0) }) {
                    throw reader.error(
                        field, "search query variable '\(missing)' is not supplied by \(who)", at: node)
                }
            }
        }
        for entry in items {
            try check(
                spec.search(for: entry.item), has: Set(entry.item.variables.keys), field: entry.field,
                who: "this item", node: entry.node)
        }
        if !spec.feeds.isEmpty {
            try check(
                spec.search, has: feedVariables, field: "feeds", who: "feed entries (which have: id, item)",
                node: root.value("feeds"))
        }
    }
}
