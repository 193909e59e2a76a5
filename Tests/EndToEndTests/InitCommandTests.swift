import Foundation
import OffpeakTestSupport
import Testing

/// `offpeak init`, through the built binary: a workspace a new user can run at once, the next
/// three steps printed as they are, never a file written over, and for every registered provider
/// an estimate with no key.
@Suite(.ownThreads) struct InitCommandTests {
    /// No provider's key, whatever the machine has set.
    static let noKeys: [String: String?] = [
        "ANTHROPIC_API_KEY": nil, "OPENAI_API_KEY": nil, "GEMINI_API_KEY": nil, "GOOGLE_API_KEY": nil,
        "OFFPEAK_STORE": nil,
    ]

    /// The crontab line `offpeak cron print` prints for the workspace: the one `init` prints.
    static func crontabLine(_ workspace: TemporaryWorkspace) throws -> String {
        let cron = try workspace.offpeak(["cron", "print"])
        #expect(cron.status == 0, "\(cron.stderr)")
        return try #require(
            cron.stdout.split(separator: "\n").first { $0.hasPrefix("*/5 ") }.map(String.init))
    }

    @Test func aNewWorkspaceOnTheSimRunsItsExampleJob() throws {
        let sim = try SimProcess()
        let workspace = try TemporaryWorkspace()
        let initialized = try workspace.offpeak(["init", "--provider", "sim"])
        #expect(initialized.status == 0, "\(initialized.stderr)")
        #expect(
            initialized.stdout == """
                wrote offpeak.yaml (provider: sim) and jobs/hello.yaml
                next:
                  offpeak-sim &       # the provider's server, on http://127.0.0.1:8089
                  offpeak run hello   # three questions; the answers go to out/hello/, and a second run costs nothing
                  crontab -e          # and add this line, to do what is due every 5 minutes (offpeak cron print says more):
                \(try Self.crontabLine(workspace))

                """)
        let config = try String(
            contentsOf: workspace.root.appendingPathComponent("offpeak.yaml"), encoding: .utf8)
        #expect(config.contains("\nprovider: sim "))
        #expect(config.contains("\n# sim needs no API key.\n"))
        let validate = try workspace.offpeak(["jobs", "validate"])
        #expect(validate.status == 0, "\(validate.stderr)")
        let run = try workspace.offpeak(["run", "hello"], environment: ["OFFPEAK_SIM_URL": sim.url])
        #expect(run.status == 0, "\(run.stderr)")
        let answers = try FileManager.default.contentsOfDirectory(
            atPath: workspace.root.appendingPathComponent("out/hello").path)
        #expect(Set(answers).isSuperset(of: ["tides.md", "sourdough.md", "chains.md"]), "\(answers)")
        // As the next step says: a second run costs nothing.
        let again = try workspace.offpeak(["run", "hello"], environment: ["OFFPEAK_SIM_URL": sim.url])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("\ncost: $0.00 for 0 calls,"), "\(again.stdout)")
    }

    @Test func itNeverWritesOverAFileAndWritesNothingThen() throws {
        let workspace = try TemporaryWorkspace()
        try workspace.write("jobs/hello.yaml", "mine\n")
        let refused = try workspace.offpeak(["init"])
        #expect(refused.status == 73)
        #expect(refused.stdout.isEmpty)
        #expect(
            refused.stderr
                == "offpeak: jobs/hello.yaml exists already in \(workspace.root.path); nothing written\n")
        #expect(
            !FileManager.default.fileExists(
                atPath: workspace.root.appendingPathComponent("offpeak.yaml").path))
        #expect(
            try String(contentsOf: workspace.root.appendingPathComponent("jobs/hello.yaml"), encoding: .utf8)
                == "mine\n")

        let fresh = try TemporaryWorkspace()
        #expect(try fresh.offpeak(["init"]).status == 0)
        let before = try String(
            contentsOf: fresh.root.appendingPathComponent("offpeak.yaml"), encoding: .utf8)
        let again = try fresh.offpeak(["init", "--provider", "openai"])
        #expect(again.status == 73)
        #expect(
            again.stderr == "offpeak: offpeak.yaml exists already in \(fresh.root.path); nothing written\n")
        #expect(
            try String(contentsOf: fresh.root.appendingPathComponent("offpeak.yaml"), encoding: .utf8)
                == before)
    }

    @Test func aFolderItCannotWriteIsRefusedWithNothingWritten() throws {
        let user = try OtherUser()
        let folder = user.folder.appendingPathComponent("locked")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        try OtherUser.setMode(0o555, folder)
        let refused = try user.offpeak(["init", "--workspace", folder.path])
        #expect(refused.status == 73)
        #expect(refused.stdout.isEmpty)
        #expect(
            refused.stderr
                == "offpeak: cannot create \(folder.path)/offpeak.yaml; nothing written (Permission denied)\n"
        )
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    /// Every registered provider: `init` names the key it reads, and `estimate` plans its example
    /// job with no key set (an estimate calls nothing).
    @Test(arguments: ["anthropic", "openai", "gemini", "sim"])
    func everyProviderEstimatesWithNoKey(provider: String) throws {
        let workspace = try TemporaryWorkspace()
        let initialized = try workspace.offpeak(["init", "--provider", provider], environment: Self.noKeys)
        #expect(initialized.status == 0, "\(initialized.stderr)")
        let key = ["anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY"][
            provider]
        let first = initialized.stdout.split(separator: "\n").dropFirst(2).first.map(String.init) ?? ""
        #expect(first.hasPrefix(key.map { "  export \($0)=... " } ?? "  offpeak-sim & "), "\(first)")
        let estimate = try workspace.offpeak(["estimate", "hello"], environment: Self.noKeys)
        #expect(estimate.status == 0, "\(provider): \(estimate.stderr)")
        #expect(estimate.stdout.contains("items: 3;"), "\(estimate.stdout)")
    }
}
