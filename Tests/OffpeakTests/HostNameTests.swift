import Foundation
import Logging
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// A host's name (`HostName`): `OFFPEAK_HOST` beats `host:` in offpeak.yaml beats the hostname, and
/// a name that is not 1 to 64 letters, digits, `.`, `_` or `-` is a configuration error naming
/// where it came from.
@Suite(.ownThreads) struct HostNameTests {
    static let expected = "expected 1 to 64 letters, digits, '.', '_' or '-'"

    @Test func theVariableBeatsTheFileWhichBeatsTheHostname() throws {
        let variable = ["OFFPEAK_HOST": "from-env"]
        #expect(
            try HostName.resolve(configured: "from-yaml", environment: variable, machine: "box") == "from-env"
        )
        #expect(
            try HostName.resolve(configured: "from-yaml", environment: [:], machine: "box") == "from-yaml")
        #expect(try HostName.resolve(configured: nil, environment: [:], machine: "box") == "box")
        // Set but empty is unset, as OFFPEAK_STORE.
        #expect(
            try HostName.resolve(configured: nil, environment: ["OFFPEAK_HOST": ""], machine: "box") == "box")
        #expect(try HostName.resolve(configured: nil, environment: [:]) == HostName.machine)
    }

    @Test(arguments: ["a", "box-1", "Web_02.example.org", String(repeating: "x", count: 64)])
    func aNameOfLettersDigitsDotsUnderscoresAndDashesIsTaken(name: String) throws {
        #expect(HostName.problem(name) == nil)
        #expect(try HostName.resolve(configured: nil, environment: ["OFFPEAK_HOST": name]) == name)
        #expect(try WorkspaceConfigParser.parse(yaml: "host: \(name)\n", path: "offpeak.yaml").host == name)
    }

    @Test func aBadVariableIsAConfigurationErrorNamingIt() throws {
        for (name, shown) in [
            ("my laptop", "my laptop"), ("a/b", "a/b"), ("tab\there", "tab\\there"), ("büro", "büro"),
            (String(repeating: "x", count: 65), String(repeating: "x", count: 65)),
        ] {
            let error = #expect(throws: OffpeakError.self) {
                try HostName.resolve(configured: "fine", environment: ["OFFPEAK_HOST": name], machine: "box")
            }
            #expect(error?.status == .configuration)
            #expect(error?.description == "OFFPEAK_HOST: \(Self.expected), got '\(shown)'")
        }
    }

    @Test func aBadNameInOffpeakYamlIsAConfigurationErrorAtItsPlace() throws {
        let error = #expect(throws: OffpeakError.self) {
            try WorkspaceConfigParser.parse(
                yaml: "provider: sim\nhost: \"my laptop\"\n", path: "offpeak.yaml")
        }
        #expect(error?.status == .configuration)
        #expect(error?.description == "offpeak.yaml:2:7: host: \(Self.expected), got 'my laptop'")
        let empty = #expect(throws: OffpeakError.self) {
            try WorkspaceConfigParser.parse(yaml: "host: \"\"\n", path: "offpeak.yaml")
        }
        #expect(empty?.description == "offpeak.yaml:1:7: host: \(Self.expected), got ''")
    }

    @Test func aHostnameThatCannotNameAHostSaysHowToNameIt() throws {
        let error = #expect(throws: OffpeakError.self) {
            try HostName.resolve(configured: nil, environment: [:], machine: "my box")
        }
        #expect(error?.status == .configuration)
        #expect(
            error?.description
                == "the machine's hostname cannot name this host: \(Self.expected), got 'my box'; "
                + "set OFFPEAK_HOST or host: in offpeak.yaml")
        #expect(throws: OffpeakError.self) {
            try HostName.resolve(configured: nil, environment: [:], machine: nil)
        }
    }

    @Test func aWorkspaceResolvesItsHostFromItsFileAndTheEnvironment() throws {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "host: rack-7\n")
        func host(_ environment: [String: String]) throws -> String {
            try WorkspaceContext(
                workspace: Workspace(root: workspace.root), environment: environment,
                logger: Logger(label: "test")
            ).host()
        }
        #expect(try host([:]) == "rack-7")
        #expect(try host(["OFFPEAK_HOST": "laptop"]) == "laptop")
        #expect(throws: OffpeakError.self) { try host(["OFFPEAK_HOST": "no way"]) }
    }
}
