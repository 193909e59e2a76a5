import Foundation

/// The rule for where a job's outputs go: a folder inside the workspace, written relative to it.
///
/// A spec's `output` and `offpeak summarize --out` both go through `checked(_:)`, so neither can
/// write outside the workspace (an absolute path, `~`, a `..`) or over its root (`""`, `.`), where
/// `offpeak.yaml`, `jobs/` and `cache/` live.
enum OutputFolder {
    /// Why a folder was refused, phrased to follow the field's name: "expected a folder ...".
    struct Refusal: Error, Equatable, CustomStringConvertible {
        var description: String
    }

    /// `raw` without trailing slashes.
    /// - Throws: `Refusal` when it is absolute, leaves the workspace, or is the workspace itself.
    static func checked(_ raw: String) throws(Refusal) -> String {
        var folder = raw
        while folder.count > 1, folder.hasSuffix("/") { folder.removeLast() }
        let parts = folder.split(separator: "/")
        if folder.hasPrefix("/") || folder.hasPrefix("~") {
            throw Refusal(
                description: "expected a folder relative to the workspace, got the absolute path '\(raw)'")
        }
        if parts.contains("..") {
            throw Refusal(
                description: "expected a folder inside the workspace, got '\(raw)', which leaves it")
        }
        if parts.allSatisfy({ $0 == "." }) {
            throw Refusal(description: "expected a folder inside the workspace, got '\(raw)'")
        }
        return folder
    }
}
