/// A prompt template with `{{name}}` placeholders.
///
/// Parsing finds every placeholder up front, so a spec that names a variable no item supplies is
/// rejected before any work starts. `{{ name }}` (with spaces) is the same as `{{name}}`.
struct Template: Sendable, Equatable, Codable {
    enum Part: Sendable, Equatable, Codable {
        case text(String)
        case variable(String)
    }

    enum ParseError: Error, Equatable {
        /// `{{` with no closing `}}`, at this character offset.
        case unclosed(offset: Int)
        /// `{{}}` or a name that is not letters, digits, `_` or `.`.
        case badName(String)
    }

    let source: String
    let parts: [Part]

    init(_ source: String) throws(ParseError) {
        self.source = source
        var parts: [Part] = []
        var rest = Substring(source)
        while let open = rest.range(of: "{{") {
            if open.lowerBound > rest.startIndex { parts.append(.text(String(rest[..<open.lowerBound]))) }
            guard let close = rest[open.upperBound...].range(of: "}}") else {
                throw .unclosed(offset: source.distance(from: source.startIndex, to: open.lowerBound))
            }
            let name = rest[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespaces)
            let allowed = name.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
                    || $0 == "."
            }
            guard !name.isEmpty, allowed else { throw .badName(name) }
            parts.append(.variable(name))
            rest = rest[close.upperBound...]
        }
        if !rest.isEmpty { parts.append(.text(String(rest))) }
        self.parts = parts
    }

    /// Every variable the template names.
    var variables: Set<String> {
        Set(parts.compactMap { if case .variable(let name) = $0 { name } else { nil } })
    }

    /// Fills the placeholders; a variable missing from `values` renders empty (validation prevents it).
    func render(_ values: [String: String]) -> String {
        parts.map { part in
            switch part {
            case .text(let text): text
            case .variable(let name): values[name] ?? ""
            }
        }.joined()
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: CharacterSetLike) -> String {
        var scalars = Substring.UnicodeScalarView(self.unicodeScalars)
        while let first = scalars.first, set.contains(first) { scalars.removeFirst() }
        while let last = scalars.last, set.contains(last) { scalars.removeLast() }
        return String(scalars)
    }
}

/// Only spaces and tabs: Foundation's CharacterSet is avoided to keep this file dependency-free.
private struct CharacterSetLike {
    static let whitespaces = CharacterSetLike()
    func contains(_ scalar: Unicode.Scalar) -> Bool { scalar == " " || scalar == "\t" }
}
