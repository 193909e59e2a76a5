/// What `offpeak jobs ls` shows: each spec's job, kind, items and schedule, or that it is invalid.
public struct JobListReport: Sendable, Encodable {
    struct Line: Sendable, Encodable, Equatable {
        var name: String
        var file: String
        var kind: String?
        var items: Int?
        var schedule: String?
        var error: String?
    }

    var lines: [Line]

    public init(_ catalog: JobCatalog) {
        lines = catalog.entries.map { entry in
            switch entry.spec {
            case .success(let spec):
                Line(
                    name: spec.name, file: entry.file, kind: spec.kind.rawValue, items: spec.items.count,
                    schedule: spec.schedule)
            case .failure(let error):
                Line(name: entry.name, file: entry.file, error: error.description)
            }
        }
    }

    /// The list alone, as `--json` has always printed it.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(lines)
    }

    public var text: String {
        let table = TextTable(columns: ["JOB", "KIND", "ITEMS", "SCHEDULE", "FILE"])
        for line in lines {
            table.add([
                line.name, line.kind ?? "invalid", line.items.map(String.init) ?? "-", line.schedule ?? "-",
                line.file,
            ])
        }
        return table.render()
    }
}

extension JobCatalog.Entry {
    /// `jobs validate`'s line for a spec that loaded: `ok  jobs/x.yaml (x: 3 items)`.
    public var validatedLine: String? {
        guard case .success(let spec) = spec else { return nil }
        return "ok  \(file) (\(spec.name): \(Plural.count(spec.items.count, "item")))"
    }
}
