import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// docs/providers.md names every registered provider as the registry declares it (issue 47, item 7):
/// a provider added to `ProviderKind` without its row, or a key or URL changed in its capabilities
/// but not in the table, fails here.
@Suite(.ownThreads) struct ProviderDocsTests {
    @Test func theKeysTableHasARowForEveryRegisteredProvider() throws {
        let text = try String(
            contentsOf: BuiltBinaries.packageRoot.appendingPathComponent("docs/providers.md"), encoding: .utf8
        )
        let rows = text.split(separator: "\n").filter { $0.hasPrefix("| `") }
        for kind in ProviderKind.allCases {
            let environment = kind.capabilities.environment
            let row = try #require(
                rows.first { $0.hasPrefix("| `\(kind.rawValue)` |") }, "no row for \(kind)")
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(cells.count >= 3, "\(row)")
            let key = cells.count > 1 ? cells[1] : ""
            if let variable = environment.key {
                #expect(key.hasPrefix("`\(variable)`"), "\(kind)'s key: \(key)")
                for overriding in environment.overridingKeys {
                    #expect(key.contains("`\(overriding)`"), "\(kind)'s key: \(key)")
                }
            } else {
                #expect(key == "none", "\(kind) needs no key: \(key)")
            }
            let url = cells.count > 2 ? cells[2] : ""
            for variable in environment.baseURL {
                #expect(url.contains("`\(variable)`"), "\(kind)'s base URL: \(url)")
            }
            #expect(url.contains("default `\(environment.defaultBaseURL)`"), "\(kind)'s base URL: \(url)")
        }
        #expect(
            rows.filter { row in ProviderKind.allCases.contains { row.hasPrefix("| `\($0.rawValue)` |") } }
                .count == ProviderKind.allCases.count)
    }
}
