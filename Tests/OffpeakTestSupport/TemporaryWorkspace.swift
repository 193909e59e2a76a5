import Foundation

/// A fresh workspace folder with `jobs/` and whatever files a test writes, removed afterwards.
public final class TemporaryWorkspace: @unchecked Sendable {
    public let root: URL
    /// Its database when the suite runs on PostgreSQL (`TestStore`).
    private let database: WorkspaceDatabase? = TestStore.onPostgres ? WorkspaceDatabase() : nil

    public init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "offpeak-test-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("jobs"), withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    /// What points a command at this workspace's store: nothing on SQLite (the workspace's file);
    /// on PostgreSQL its database's URL and password (made on first use).
    public func storeEnvironment() throws -> [String: String] {
        try database?.environment() ?? [:]
    }

    /// Writes `text` to `path` (relative), creating folders.
    @discardableResult
    public func write(_ path: String, _ text: String) throws -> URL {
        let url = root.appendingPathComponent(path)
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
        return url
    }

    /// Adds `limits: {sim: {in_flight: 1}}` to `offpeak.yaml`: for a test whose premise is calls
    /// made one after another (a stop, a fault or a window after the Nth call), which offpeak did
    /// before it kept calls in flight and still does when configured so.
    public func oneCallInFlight() throws {
        try write("offpeak.yaml", (read("offpeak.yaml") ?? "") + "\nlimits: {sim: {in_flight: 1}}\n")
    }

    /// `runID(of:)` found no run of the job.
    public struct NoRun: Error, CustomStringConvertible {
        public let description: String
    }

    /// The id of job `job`'s latest run, as `offpeak status --json` lists it.
    public func runID(of job: String, environment: [String: String?] = [:]) throws -> String {
        let status = try offpeak(["status", "--json"], environment: environment)
        let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        let runs = object?["runs"] as? [[String: Any]] ?? []
        guard let id = runs.first(where: { $0["job"] as? String == job })?["id"] as? String else {
            throw NoRun(description: "no run of job \(job) in offpeak status: \(status.stdout)")
        }
        return id
    }

    public func read(_ path: String) -> String? {
        FileManager.default.contents(atPath: root.appendingPathComponent(path).path).map {
            String(decoding: $0, as: UTF8.self)
        }
    }

    /// Writes `count` small documents `docs/doc-N.md`, each with distinct sentences.
    public func writeDocuments(_ count: Int) throws {
        for index in 1...count {
            try write(
                "docs/doc-\(String(format: "%03d", index)).md",
                "# Document \(index)\n\nThis is document number \(index). It describes topic \(index * 7). "
                    + "A second sentence adds detail \(index). A third one closes it.\n")
        }
    }

    /// Every file under `path`, with its content, for comparing output folders.
    public func snapshot(_ path: String) -> [String: String] {
        let base = root.appendingPathComponent(path)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: base.path) else { return [:] }
        var files: [String: String] = [:]
        for name in names { files[name] = read(path + "/" + name) }
        return files
    }
}

extension TemporaryWorkspace {
    /// A workspace on `sim` with `documents` documents and the summarize job `docs`, batching off so
    /// one item is one call.
    public static func docs(on sim: SimProcess, documents: Int, extra: String = "") throws
        -> TemporaryWorkspace
    {
        let workspace = try TemporaryWorkspace()
        try workspace.write("offpeak.yaml", "provider: sim\nbase_url: \(sim.url)\n")
        try workspace.writeDocuments(documents)
        try workspace.write(
            "jobs/docs.yaml",
            "kind: summarize\ninputs: [docs/*.md]\nmax_tokens: 200\nbatching: off\n\(extra)\n")
        return workspace
    }

    /// Runs the built `offpeak` on this workspace (`--workspace` added), to the end.
    public func offpeak(
        _ arguments: [String], environment: [String: String?] = [:], stdin: String? = nil,
        timeout: TimeInterval = 120
    ) throws -> CommandResult {
        var environment = environment
        for (name, value) in try storeEnvironment() where environment.index(forKey: name) == nil {
            environment[name] = value
        }
        return try CommandResult.run(
            BuiltBinaries.offpeak, arguments + ["--workspace", root.path], environment: environment,
            stdin: stdin.map { Data($0.utf8) }, timeout: timeout)
    }
}
