import Foundation

/// The folder offpeak works in: `offpeak.yaml`, `jobs/`, `cache/`, `out/`.
public struct Workspace: Sendable, Equatable {
    public let root: URL

    public init(root: URL) {
        self.root = root.standardizedFileURL
    }

    /// `--workspace DIR`, else `OFFPEAK_WORKSPACE`, else the current directory.
    public static func resolve(_ argument: String?, environment: [String: String]) -> Workspace {
        let path =
            argument ?? environment["OFFPEAK_WORKSPACE"].flatMap { $0.isEmpty ? nil : $0 }
            ?? FileManager.default.currentDirectoryPath
        return Workspace(root: URL(fileURLWithPath: path, isDirectory: true))
    }

    var jobsDirectory: URL { root.appendingPathComponent("jobs", isDirectory: true) }
    public var cacheDirectory: URL { root.appendingPathComponent("cache", isDirectory: true) }
    var databaseURL: URL { cacheDirectory.appendingPathComponent("offpeak.sqlite") }
    var configURL: URL { root.appendingPathComponent("offpeak.yaml") }

    /// Resolves a path from a spec (relative to the workspace) or the command line.
    func url(for path: String) -> URL {
        path.hasPrefix("/") ? URL(fileURLWithPath: path) : root.appendingPathComponent(path)
    }

    /// `path` relative to the workspace when it lies inside it, else as given; for messages.
    func displayPath(_ url: URL) -> String {
        let full = url.standardizedFileURL.path
        let base = root.path.hasSuffix("/") ? root.path : root.path + "/"
        return full.hasPrefix(base) ? String(full.dropFirst(base.count)) : full
    }
}
