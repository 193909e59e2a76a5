import Foundation

/// The workspace's job specs, each loaded or with why it could not be: the one loader behind
/// `jobs ls`, `jobs validate` and `tick`, so all three agree on what a workspace's jobs are.
public struct JobCatalog: Sendable {
    /// One spec file and what came of reading it.
    public struct Entry: Sendable {
        let url: URL
        /// The file as the user should see it, e.g. `jobs/digest.yaml`.
        let file: String
        public let spec: Result<JobSpec, OffpeakError>

        /// The job's name: the spec's, else the file's base name.
        var name: String {
            (try? spec.get().name) ?? url.deletingPathExtension().lastPathComponent
        }
    }

    public let entries: [Entry]

    /// The specs that loaded, by job name (the last file by name wins where two name the same job).
    var specs: [String: JobSpec] {
        var specs: [String: JobSpec] = [:]
        for entry in entries {
            if let spec = try? entry.spec.get() { specs[spec.name] = spec }
        }
        return specs
    }

    /// Why the specs that did not load could not.
    public var errors: [OffpeakError] {
        entries.compactMap { entry in
            if case .failure(let error) = entry.spec { return error }
            return nil
        }
    }

    /// Every spec in `jobs/` (sorted by file name), or the jobs `named` (names or paths).
    /// - Throws: a usage error for a named job that does not exist.
    public static func load(workspace: URL, named: [String] = []) throws(OffpeakError) -> JobCatalog {
        var files: [URL] = []
        if named.isEmpty {
            files = JobSpecParser.specFiles(in: workspace)
        } else {
            for job in named { files.append(try JobSpecParser.resolve(job, workspace: workspace)) }
        }
        return JobCatalog(
            entries: files.map { url in
                let spec = Result { () throws(OffpeakError) -> JobSpec in
                    try JobSpecParser.load(path: url, workspace: workspace)
                }
                return Entry(
                    url: url, file: JobSpecParser.displayPath(of: url, workspace: workspace), spec: spec)
            })
    }
}
