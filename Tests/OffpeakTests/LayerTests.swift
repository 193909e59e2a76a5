import Foundation
import Testing

/// The library's folders are layers: a folder may name only types of the folders below it, so a
/// newcomer knows what a file may touch and the bottom can be read without the top.
struct LayerTests {
    /// `Sources/Offpeak/`'s folders, bottom first: each may use only those listed before it. The one
    /// place the order is written down (CONTRIBUTING.md's Layout part says the same in words).
    static let layers = [
        "Support", "HTTP", "Schedule", "Providers", "Pricing", "Spec", "Conditions", "Store", "Cache",
        "Research", "Planning", "Intake", "Execution", "Reporting", "Workspace", "Dashboard",
    ]

    static let library = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/Offpeak", isDirectory: true)

    /// Each folder's Swift files, with those of its subfolders, read and scanned.
    static func folders() throws -> [String: [(file: String, names: SwiftFileNames)]] {
        let manager = FileManager.default
        var folders: [String: [(file: String, names: SwiftFileNames)]] = [:]
        for folder in try manager.contentsOfDirectory(atPath: library.path).sorted() {
            let url = library.appendingPathComponent(folder, isDirectory: true)
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue
            else {
                continue
            }
            // A folder's own subfolders (`Store/Postgres/`) belong to its layer.
            let files = (manager.enumerator(atPath: url.path)?.allObjects as? [String]) ?? []
            folders[folder] = try files.sorted()
                .filter { $0.hasSuffix(".swift") }
                .map { file in
                    let text = try String(contentsOf: url.appendingPathComponent(file), encoding: .utf8)
                    return (file, SwiftFileNames(source: text))
                }
        }
        return folders
    }

    @Test func everyFolderIsInTheLayerList() throws {
        let folders = try Self.folders()
        #expect(!folders.isEmpty, "no folders under \(Self.library.path)")
        for folder in folders.keys.sorted() where !Self.layers.contains(folder) {
            Issue.record("Sources/Offpeak/\(folder)/ is not in LayerTests.layers: place it among the layers")
        }
        for layer in Self.layers where folders[layer] == nil {
            Issue.record("LayerTests.layers names \(layer), which is not a folder of Sources/Offpeak")
        }
    }

    @Test func eachFolderNamesOnlyTypesOfTheFoldersBelowIt() throws {
        let folders = try Self.folders()
        var owner: [String: String] = [:]
        for (folder, files) in folders.sorted(by: { $0.key < $1.key }) {
            for (file, names) in files {
                for name in names.declared {
                    if let other = owner[name], other != folder {
                        Issue.record("\(folder)/\(file) declares \(name), which \(other) declares too")
                    }
                    owner[name] = folder
                }
            }
        }
        var violations: [String] = []
        for (folder, files) in folders {
            guard let rank = Self.layers.firstIndex(of: folder) else { continue }
            for (file, names) in files {
                for name in names.used {
                    guard let other = owner[name], other != folder,
                        let otherRank = Self.layers.firstIndex(of: other), otherRank > rank
                    else { continue }
                    violations.append("\(folder)/\(file) names \(name) of \(other), a layer above \(folder)")
                }
            }
        }
        for violation in violations.sorted() { Issue.record(Comment(rawValue: violation)) }
    }

    /// The reader counts what it should: top-level declarations only, code not text.
    @Test func theReaderSeesTopLevelNamesAndCodeOnly() {
        let names = SwiftFileNames(
            source: ##"""
                /// A Store in a comment, /* and a JobSpec */ in another.
                public struct RunBook: Codable {
                    enum CodingKeys: String, CodingKey { case kind }
                    struct Kind {}
                    let kind: Kind
                    let text = "a Template, \(Money.dollars(1)) and \("nested \(Plural.count(2, "TextTable"))")"
                    let more = """
                        Workspace \(Timestamp.now)
                        """
                    let raw = #"Cache \(Store) \#(Redactor.self)"#
                    let outcome: CallReply.Outcome
                    let range = 0...Limit.max
                }
                extension JobCatalog.Entry: Sendable {}
                typealias Names = [String]
                """##)
        #expect(names.declared == ["RunBook", "Names"])
        #expect(names.nested == ["CodingKeys", "Kind"])
        #expect(names.extended == ["JobCatalog"])
        #expect(
            names.used == [
                "Codable", "String", "CodingKey", "Money", "Plural", "Timestamp", "Redactor", "CallReply",
                "Limit",
                "JobCatalog", "Sendable",
            ])
    }
}
