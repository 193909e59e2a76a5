import Foundation

/// Finding and reading spec files in a workspace's `jobs/` folder.
extension JobSpecParser {
    /// Reads and parses one spec file; messages name it relative to the workspace when inside it.
    /// - Throws: `.ioError` when the file cannot be read, `.dataError` for anything in it.
    static func load(path: URL, workspace: URL) throws(OffpeakError) -> JobSpec {
        let display = displayPath(of: path, workspace: workspace)
        let data: Data
        do {
            data = try Data(contentsOf: path)
        } catch {
            let reason = FileManager.default.fileExists(atPath: path.path) ? "cannot read it" : "no such file"
            throw OffpeakError(.ioError, "cannot read the job spec: \(reason)", location: display)
        }
        let text = try UTF8Text.decode(data, file: display, status: .dataError)
        return try parse(yaml: text, path: display, workspace: workspace)
    }

    /// `jobs/*.yaml` and `jobs/*.yml` in the workspace, sorted by file name; `[]` without `jobs/`.
    static func specFiles(in workspace: URL) -> [URL] {
        let jobs = workspace.appendingPathComponent("jobs", isDirectory: true)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: jobs.path)) ?? []
        return names.filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }
            .sorted()
            .map { jobs.appendingPathComponent($0) }
            .filter { isFile($0.path) }
    }

    /// Resolves a user's JOB argument to a spec file.
    ///
    /// An existing file path wins (relative to the current directory, then to the workspace), so
    /// `offpeak run jobs/x.yaml` works from anywhere in the usual layout; otherwise the argument is
    /// a job name looked up as `jobs/NAME.yaml`, then `jobs/NAME.yml`.
    /// - Throws: `.usage` naming the places looked in and the jobs that do exist.
    static func resolve(_ argument: String, workspace: URL) throws(OffpeakError) -> URL {
        let direct =
            argument.hasPrefix("/")
            ? [URL(fileURLWithPath: argument)]
            : [
                URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(
                    argument),
                workspace.appendingPathComponent(argument),
            ]
        if let file = direct.first(where: { isFile($0.path) }) { return file.standardizedFileURL }
        let jobs = workspace.appendingPathComponent("jobs", isDirectory: true)
        if !argument.contains("/") {
            let named = argument.hasSuffix(".yaml") || argument.hasSuffix(".yml")
            for suffix in named ? [""] : [".yaml", ".yml"] {
                let candidate = jobs.appendingPathComponent(argument + suffix)
                if isFile(candidate.path) { return candidate }
            }
        }
        let known = specFiles(in: workspace).map { $0.deletingPathExtension().lastPathComponent }
        let list =
            known.isEmpty ? "there are no jobs in jobs/" : "known jobs: \(known.joined(separator: ", "))"
        throw OffpeakError(
            .usage, "no job '\(argument)': not a file, and no jobs/\(argument).yaml or .yml (\(list))")
    }

    /// `path` relative to `workspace` when it lies inside it, else the path as given.
    static func displayPath(of path: URL, workspace: URL) -> String {
        let file = path.standardizedFileURL.path
        let root = workspace.standardizedFileURL.path
        let prefix = root.hasSuffix("/") ? root : root + "/"
        return file.hasPrefix(prefix) ? String(file.dropFirst(prefix.count)) : file
    }

    private static func isFile(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            && !isDirectory.boolValue
    }
}
