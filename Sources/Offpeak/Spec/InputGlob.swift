import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Expands a spec's `inputs` patterns with the C library's glob(3), relative to the workspace.
///
/// glob(3) gives the shell's rules (`*`, `?`, `[a-z]`; no leading-dot matches) that users already
/// know from the command line, sorted, without us writing a matcher.
enum InputGlob {
    /// Why a pattern is refused before it is expanded.
    enum PatternError: Error, Equatable {
        case absolute
        case leavesWorkspace
        case empty
    }

    /// Workspace-relative paths of the regular files `pattern` matches, sorted; `[]` for no match.
    static func matches(_ pattern: String, workspace: URL) throws(PatternError) -> [String] {
        guard !pattern.isEmpty else { throw .empty }
        guard !pattern.hasPrefix("/"), !pattern.hasPrefix("~") else { throw .absolute }
        guard !pattern.split(separator: "/").contains("..") else { throw .leavesWorkspace }
        let root = workspace.standardizedFileURL.path
        let prefix = root.hasSuffix("/") ? root : root + "/"
        let full = escape(prefix) + pattern
        var result = glob_t()
        defer { globfree(&result) }
        guard glob(full, 0, nil, &result) == 0 else { return [] }
        var paths: [String] = []
        for index in 0..<Int(result.gl_pathc) {
            guard let pointer = result.gl_pathv[index] else { continue }
            let path = String(cString: pointer)
            guard isRegularFile(path), path.hasPrefix(prefix) else { continue }
            paths.append(String(path.dropFirst(prefix.count)))
        }
        return paths.sorted()
    }

    /// Backslash-escapes glob metacharacters so a workspace called `notes[1]` matches itself.
    private static func escape(_ path: String) -> String {
        var escaped = ""
        for character in path {
            if "*?[]\\{}".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }

    private static func isRegularFile(_ path: String) -> Bool {
        let type = try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType
        return type == .typeRegular || (type == .typeSymbolicLink && resolvesToFile(path))
    }

    private static func resolvesToFile(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            && !isDirectory.boolValue
    }
}
