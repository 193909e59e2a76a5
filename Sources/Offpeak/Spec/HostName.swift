import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The name a host goes by in a shared store: each lease, budget reservation and ledger row it
/// writes carries it, and `offpeak hosts` lists it.
///
/// `OFFPEAK_HOST`, when set and not empty, wins over `host:` in offpeak.yaml (so one workspace
/// folder, deployed to many machines, can still name each), which wins over the machine's
/// hostname. A name is 1 to 64 letters, digits, `.`, `_` or `-`: what a hostname may hold, and
/// safe in a table, a file name or a log line.
enum HostName {
    /// The variable that overrides `host:`.
    static let variable = "OFFPEAK_HOST"

    /// The longest name (Linux's `HOST_NAME_MAX`).
    static let maxLength = 64

    /// What a name must be, as every message about one says it.
    static let expected = "expected 1 to 64 letters, digits, '.', '_' or '-'"

    /// Why `text` cannot name a host (`expected …, got '…'`), or nil when it can.
    static func problem(_ text: String) -> String? {
        let allowed = text.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII
                && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
                    || ("0"..."9").contains(scalar) || scalar == "." || scalar == "_" || scalar == "-")
        }
        if allowed, !text.isEmpty, text.unicodeScalars.count <= maxLength { return nil }
        return "\(expected), got '\(ReadableText.escaped(text))'"
    }

    /// This process's host name: `OFFPEAK_HOST` when set, else `configured` (offpeak.yaml's
    /// `host:`, checked when it was read), else the machine's hostname.
    /// - Parameter machine: the machine's hostname (`gethostname`), or nil when it cannot be read.
    /// - Throws: `.configuration` naming `OFFPEAK_HOST` when its value is not a name, or naming the
    ///   hostname when that is what would be used and it is not one.
    static func resolve(
        configured: String?, environment: [String: String], machine: String? = HostName.machine
    ) throws(OffpeakError) -> String {
        if let text = environment[variable], !text.isEmpty {
            if let problem = problem(text) { throw OffpeakError(.configuration, "\(variable): \(problem)") }
            return text
        }
        if let configured { return configured }
        let name = machine ?? ""
        if let problem = problem(name) {
            throw OffpeakError(
                .configuration,
                "the machine's hostname cannot name this host: \(problem); set \(variable) or host: in "
                    + "offpeak.yaml")
        }
        return name
    }

    /// The machine's hostname, or nil when it cannot be read.
    static var machine: String? {
        var name = [UInt8](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return nil }
        return String(decoding: name.prefix { $0 != 0 }, as: UTF8.self)
    }
}
