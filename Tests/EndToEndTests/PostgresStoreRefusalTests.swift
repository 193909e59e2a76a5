import Foundation
import OffpeakTestSupport
import Testing

/// A workspace pointed at a PostgreSQL store, while the PostgreSQL engine holds only the schema:
/// every command that would run or report on the store refuses, naming where the URL came from,
/// and leaves no SQLite file behind (no work split between two stores).
struct PostgresStoreRefusalTests {
    static let url = "postgresql://offpeak@127.0.0.1:5/offpeak"
    static let refusal =
        "names the PostgreSQL store postgresql://offpeak@127.0.0.1:5/offpeak; this offpeak runs jobs and "
        + "reports on the embedded SQLite store only (PostgreSQL: `offpeak store info`); unset it to use "
        + "cache/offpeak.sqlite\n"

    @Test(arguments: [["status"], ["queue"], ["costs"], ["cache", "stats"], ["run", "docs"], ["tick"]])
    func aPostgreSQLStoreInOffpeakYAMLIsRefusedNotIgnored(command: [String]) throws {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nstore: \(Self.url)\n")
        try workspace.write("jobs/docs.yaml", "kind: prompt\ntemplate: \"{{item}}\"\nitems: [a]\n")
        let result = try workspace.offpeak(command)
        #expect(result.status == 78)
        #expect(result.stderr == "offpeak: store: in offpeak.yaml " + Self.refusal)
        #expect(
            !FileManager.default.fileExists(
                atPath: workspace.root.appendingPathComponent("cache/offpeak.sqlite").path))
    }

    @Test func theVariableWinsAndIsNamed() throws {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nstore: sqlite\n")
        let result = try workspace.offpeak(["status"], environment: ["OFFPEAK_STORE": Self.url])
        #expect(result.status == 78)
        #expect(result.stderr == "offpeak: OFFPEAK_STORE " + Self.refusal)
    }
}
