import Foundation

/// Model prices, keyed by model name, in LiteLLM's `model_prices_and_context_window.json`
/// format: the community's price map, so a newer copy of it can simply be pointed to.
public struct PriceTable: Sendable, Equatable {
    public var models: [String: ModelPrice]

    public init(models: [String: ModelPrice] = [:]) {
        self.models = models
    }

    /// The prices offpeak ships with (`BundledPrices`). Checked by a test to decode in full.
    public static let bundled: PriceTable =
        (try? decode(Data(BundledPrices.json.utf8), source: "bundled prices")) ?? PriceTable()

    /// Reads an override file.
    /// - Throws: `OffpeakError` (`.configuration`) naming the file and, for a bad entry, its key.
    public static func load(file: URL) throws(OffpeakError) -> PriceTable {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw OffpeakError(
                .configuration, "cannot read the price file", location: file.path,
                cause: error.localizedDescription)
        }
        return try decode(data, source: file.path)
    }

    /// Decodes a LiteLLM-format price map; `sample_spec` (LiteLLM's documentation entry) and
    /// unknown fields are skipped.
    /// - Parameter source: where the data came from, for error messages.
    public static func decode(_ data: Data, source: String) throws(OffpeakError) -> PriceTable {
        guard let object = try? JSONSerialization.jsonObject(with: data),
            let entries = object as? [String: Any]
        else {
            throw OffpeakError(.configuration, "price file is not a JSON object of models", location: source)
        }
        let decoder = JSONDecoder()
        var models: [String: ModelPrice] = [:]
        for (name, entry) in entries where name != "sample_spec" {
            do {
                let entryData = try JSONSerialization.data(
                    withJSONObject: entry, options: [.fragmentsAllowed])
                models[name] = try decoder.decode(ModelPrice.self, from: entryData)
            } catch {
                throw OffpeakError(
                    .configuration, "price entry \"\(name)\" is not valid", location: source,
                    cause: reason(error))
            }
        }
        return PriceTable(models: models)
    }

    /// This table with `other`'s entries added; where both have a model, `other` wins.
    public func merging(_ other: PriceTable) -> PriceTable {
        PriceTable(models: models.merging(other.models) { _, newer in newer })
    }

    /// The prices of `model`: by exact name, then without a provider prefix (`anthropic/...`),
    /// then without a trailing date (`claude-sonnet-4-5-20250929`, `gpt-4o-mini-2024-07-18`).
    public func price(for model: String) -> ModelPrice? {
        let unprefixed =
            model.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? model
        for name in [model, unprefixed, Self.withoutDate(model), Self.withoutDate(unprefixed)] {
            if let price = models[name] { return price }
        }
        return nil
    }

    /// `name` without a `-YYYYMMDD` or `-YYYY-MM-DD` suffix.
    static func withoutDate(_ name: String) -> String {
        for pattern in [#"-\d{8}$"#, #"-\d{4}-\d{2}-\d{2}$"#] {
            if let range = name.range(of: pattern, options: .regularExpression) {
                return String(name[..<range.lowerBound])
            }
        }
        return name
    }

    private static func reason(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context),
            .keyNotFound(_, let context):
            let field = context.codingPath.last?.stringValue ?? "entry"
            return "\(field): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }
}
