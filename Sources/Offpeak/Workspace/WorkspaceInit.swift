import Foundation

/// `offpeak init`: a commented `offpeak.yaml` for a provider, and one example job, written into a
/// workspace folder, never over a file that is there; and the next three things to do.
///
/// What it says of the provider comes from what the provider declares (`ProviderCapabilities`):
/// the variable its key is read from (or the server to start, for offpeak-sim), its base URL and
/// its models per tier.
public struct WorkspaceInit: Sendable {
    /// The example job's name, and its file in `jobs/`.
    public static let exampleJob = "hello"

    var workspace: Workspace
    var provider: ProviderKind
    /// The crontab line that ticks the workspace (`TickInstallation`).
    var crontabLine: String

    /// - Parameter binary: this offpeak's absolute path, which the crontab line runs.
    public init(workspace: Workspace, provider: ProviderKind?, binary: String) throws(OffpeakError) {
        self.workspace = workspace
        self.provider = provider ?? .standard
        crontabLine =
            try TickInstallation(binary: binary, workspace: workspace, everyMinutes: 5, window: "240s")
            .crontabLine
    }

    /// The files it writes, by path relative to the workspace, in order.
    var files: [(path: String, text: String)] {
        [("offpeak.yaml", configuration), ("jobs/\(Self.exampleJob).yaml", example)]
    }

    /// Writes the files: both, or none (exit 73 when one exists already or cannot be made).
    /// - Returns: what to tell the user.
    public func write() throws(OffpeakError) -> String {
        for file in files where FileManager.default.fileExists(atPath: url(file.path).path) {
            throw OffpeakError(
                .cannotCreate, "\(file.path) exists already in \(workspace.root.path); nothing written")
        }
        var written: [URL] = []
        do {
            for file in files {
                let url = url(file.path)
                try Self.makeFolder(url.deletingLastPathComponent())
                try AtomicFile.create(Data(file.text.utf8), at: url)
                written.append(url)
            }
        } catch {
            for url in written { unlink(url.path) }
            throw OffpeakError(
                .cannotCreate, error.message + "; nothing written", location: error.location,
                cause: error.cause)
        }
        return text
    }

    private func url(_ path: String) -> URL { workspace.root.appendingPathComponent(path) }

    private static func makeFolder(_ folder: URL) throws(OffpeakError) {
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw OffpeakError(.cannotCreate, "cannot create the folder \(folder.path)")
        }
    }

    /// What `init` prints: what it wrote, and the next three commands.
    var text: String {
        let environment = provider.capabilities.environment
        let first =
            if let key = environment.key {
                (
                    "export \(key)=...",
                    "your key: offpeak reads it from the environment only, and never writes it"
                )
            } else {
                (environment.serverCommand ?? "", "the provider's server, on \(environment.defaultBaseURL)")
            }
        let steps = [
            first,
            (
                "offpeak run \(Self.exampleJob)",
                "three questions; the answers go to out/hello/, and a second run costs nothing"
            ),
            (
                "crontab -e",
                "and add this line, to do what is due every 5 minutes (offpeak cron print says more):"
            ),
        ]
        let width = steps.map(\.0.count).max() ?? 0
        var out =
            "wrote offpeak.yaml (provider: \(provider.rawValue)) and jobs/\(Self.exampleJob).yaml\nnext:\n"
        for (command, why) in steps {
            out += "  \(command)\(String(repeating: " ", count: width - command.count))   # \(why)\n"
        }
        return out + "\(crontabLine)\n"
    }

    /// The workspace's settings: the provider, and the rest commented with their defaults.
    var configuration: String {
        let capabilities = provider.capabilities
        let environment = capabilities.environment
        let models = capabilities.models
        // A setting and its comment, the comments in one column.
        let line = { (setting: String, comment: String) in
            setting.padding(toLength: max(setting.count + 1, 38), withPad: " ", startingAt: 0)
                + "# \(comment)\n"
        }
        let variables = environment.baseURL.map { "$\($0)" }.joined(separator: " or ")
        let key =
            environment.key.map { key in
                "# The API key is read from $\(([key] + environment.overridingKeys).joined(separator: " or $")), "
                    + "never from this file.\n"
            } ?? "# \(provider.rawValue) needs no API key.\n"
        return "# offpeak's settings for this workspace, written by `offpeak init`. Every key is optional:\n"
            + "# what is commented out is the default. docs/ has a guide for each (docs/providers.md first).\n"
            + line("provider: \(provider.rawValue)", "one of \(ProviderKind.names)")
            + line("# base_url: \(environment.defaultBaseURL)", "else \(variables) when set; a URL here wins")
            + key
            + line("# models:", "the model each tier of a job asks")
            + "#   \(provider.rawValue): {fast: \(models.fast), balanced: \(models.balanced), "
            + "powerful: \(models.powerful)}\n"
            + line("# budget:", "what the whole workspace may spend, every job together")
            + line("#   per_day: 1.00", "dollars per local day")
            + line("#   per_month: 20.00", "dollars per local calendar month")
            + line("# network: {metered: [wwan0]}", "interfaces whose traffic costs money: heavy work waits")
            + line(
                "# retention: {runs: 90d, ledger: 180d}",
                "finished runs' answers, then each call's ledger row")
    }

    /// A small job to run first.
    var example: String {
        """
        # An example job, written by `offpeak init`: three short questions. offpeak writes the
        # answers to out/hello/ and keeps them in its cache for a day, so a second run costs
        # nothing. Run it with `offpeak run hello`; docs/jobs.md has every field.
        name: \(Self.exampleJob)
        kind: prompt
        tier: fast
        system: Answer in one sentence.
        template: "{{item}}"
        items:
          - {id: tides, item: "Why are there two high tides a day?"}
          - {id: sourdough, item: "Why does sourdough rise without added yeast?"}
          - {id: chains, item: "When should a bicycle chain be replaced?"}
        output: out/hello
        max_tokens: 100
        cache_ttl: 24h
        budget: {max_dollars: 0.05}

        """
    }
}
