import Foundation

/// Model prices, keyed by model name, in LiteLLM's `model_prices_and_context_window.json`
/// format: the community's price map, so a newer copy of it can simply be pointed to.
struct PriceTable: Sendable, Equatable {
    var models: [String: ModelPrice]

    init(models: [String: ModelPrice] = [:]) {
        self.models = models
    }

    /// The prices offpeak ships with: each registered provider's own (`ProviderRegistration.prices`),
    /// read once for the built-in providers. Checked by a test to decode in full.
    static var bundled: PriceTable {
        let registered = ProviderRegistry.registered
        guard registered.map(\.name) == ProviderRegistry.builtIn.map(\.name) else {
            return table(of: registered)
        }
        return builtIn
    }

    private static let builtIn = table(of: ProviderRegistry.builtIn)

    /// The providers' prices merged, each text read once (offpeak-sim's are Anthropic's).
    static func table(of providers: [ProviderRegistration]) -> PriceTable {
        var read: Set<String> = []
        var table = PriceTable()
        for provider in providers where read.insert(provider.prices).inserted {
            let source = "\(provider.name)'s bundled prices"
            table = table.merging((try? decode(Data(provider.prices.utf8), source: source)) ?? PriceTable())
        }
        return table
    }

    /// Reads the workspace's price file (`prices:` in `offpeak.yaml`).
    /// - Parameters:
    ///   - file: the file to read.
    ///   - shownAs: the file as the user wrote it (`prices.json`), for messages; else its path.
    ///   - configuredAt: where `offpeak.yaml` names the file (`offpeak.yaml:4:9`). A problem is then
    ///     reported there, as `prices:` followed by the file, the line and column when known, and what
    ///     is wrong, since the fix may be in either file.
    /// - Throws: `OffpeakError` (`.configuration`) naming the file and, for a bad entry, its key.
    static func load(
        file: URL, shownAs: String? = nil, configuredAt: String? = nil
    ) throws(OffpeakError) -> PriceTable {
        let name = shownAs ?? file.path
        do {
            return try read(file, name: name)
        } catch {
            guard let configuredAt else { throw error }
            throw OffpeakError(.configuration, "prices: \(error.description)", location: configuredAt)
        }
    }

    private static func read(_ file: URL, name: String) throws(OffpeakError) -> PriceTable {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw OffpeakError(
                .configuration, "cannot read the price file", location: name,
                cause: error.localizedDescription)
        }
        _ = try UTF8Text.decode(data, file: name, status: .configuration)
        return try decode(data, source: name)
    }

    /// Decodes a LiteLLM-format price map; `sample_spec` (LiteLLM's documentation entry) and
    /// unknown fields are skipped.
    /// - Parameter source: where the data came from, for error messages.
    static func decode(_ data: Data, source: String) throws(OffpeakError) -> PriceTable {
        // One pass when every entry decodes, as the bundled table and a sound file do: writing each
        // entry back to JSON to decode it alone was most of an idle tick's price work (10 M of 12 M
        // instructions for the bundled ten). Only a table with a bad entry takes the path below,
        // which names the entry.
        if let entries = try? JSONDecoder().decode([String: LenientEntry].self, from: data),
            entries.allSatisfy({ $0.key == "sample_spec" || $0.value.price != nil })
        {
            return PriceTable(models: entries.filter { $0.key != "sample_spec" }.compactMapValues(\.price))
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw syntaxError(error, in: data, source: source)
        }
        guard let entries = object as? [String: Any] else {
            let got = object is [Any] ? "a list" : "a single value"
            throw OffpeakError(
                .configuration, "expected a JSON object of models (LiteLLM's format), got \(got)",
                location: source)
        }
        let decoder = JSONDecoder()
        var models: [String: ModelPrice] = [:]
        for (name, entry) in entries where name != "sample_spec" {
            do {
                let entryData = try JSONSerialization.data(
                    withJSONObject: entry, options: [.fragmentsAllowed])
                models[name] = try decoder.decode(ModelPrice.self, from: entryData)
            } catch {
                var location = source
                let path = [JSONPosition.Step.key(name)] + JSONPosition.steps(codingPath(of: error))
                if let position = JSONPosition.of(path, in: data) {
                    location += ":\(position.line):\(position.column)"
                }
                throw OffpeakError(
                    .configuration, "price entry \"\(name)\" is not valid", location: location,
                    cause: reason(error))
            }
        }
        return PriceTable(models: models)
    }

    /// An entry's prices, or nil when they do not decode (LiteLLM's `sample_spec` does not).
    private struct LenientEntry: Decodable {
        var price: ModelPrice?

        init(from decoder: any Decoder) {
            price = try? ModelPrice(from: decoder)
        }
    }

    /// This table with `other`'s entries added; where both have a model, `other` wins.
    func merging(_ other: PriceTable) -> PriceTable {
        PriceTable(models: models.merging(other.models) { _, newer in newer })
    }

    /// The prices of `model` in force at `date` (`ModelPrice.at(_:)`), named by their window.
    func price(for model: String, at date: Date) -> ModelPrice? {
        price(for: model)?.at(date)
    }

    /// The prices of `model`: by exact name, then without a provider prefix (`anthropic/...`),
    /// then without a trailing date (`claude-sonnet-4-5-20250929`, `gpt-4o-mini-2024-07-18`).
    func price(for model: String) -> ModelPrice? {
        let unprefixed =
            model.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? model
        for name in [model, unprefixed, Self.withoutDate(model), Self.withoutDate(unprefixed)] {
            if let price = models[name] { return price }
        }
        return nil
    }

    /// `name` without a `-YYYYMMDD` or `-YYYY-MM-DD` suffix. Read by hand: each call's price is
    /// looked up by it, and a regular expression compiled per lookup cost more than the lookup.
    static func withoutDate(_ name: String) -> String {
        let bytes = Array(name.utf8)
        func isDate(_ shape: String) -> Bool {
            guard bytes.count > shape.utf8.count else { return false }
            return zip(bytes.suffix(shape.utf8.count), shape.utf8).allSatisfy { byte, expected in
                expected == UInt8(ascii: "9")
                    ? (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) : byte == expected
            }
        }
        for shape in ["-99999999", "-9999-99-99"] where isDate(shape) {
            return String(decoding: bytes.dropLast(shape.utf8.count), as: UTF8.self)
        }
        return name
    }

    /// "not valid JSON", at the line and column Foundation's message points to when it names one
    /// ("... around character 45." on Linux, "... around line 3, column 8." on macOS); the message
    /// itself is the cause.
    private static func syntaxError(_ error: any Error, in data: Data, source: String) -> OffpeakError {
        let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String
        var location = source
        if let detail, let match = detail.firstMatch(of: /around line (\d+), column (\d+)/) {
            location += ":\(match.1):\(match.2)"
        } else if let detail, let match = detail.firstMatch(of: /around character (\d+)/),
            let offset = Int(match.1)
        {
            let position = UTF8Text.position(ofByte: offset, in: data)
            location += ":\(position.line):\(position.column)"
        }
        return OffpeakError(.configuration, "not valid JSON", location: location, cause: detail)
    }

    /// The field a decoding error is about, as a reader writes it (`price_windows.windows[1].hours`).
    private static func reason(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        let field = JSONPosition.text(JSONPosition.steps(codingPath(of: error)))
        return "\(field.isEmpty ? "entry" : field): \(context(of: error)?.debugDescription ?? "\(error)")"
    }

    /// Where in an entry a decoding error is: the field's path, or the missing key's.
    private static func codingPath(of error: any Error) -> [any CodingKey] {
        guard let error = error as? DecodingError, let context = context(of: error) else { return [] }
        if case .keyNotFound(let key, _) = error { return context.codingPath + [key] }
        return context.codingPath
    }

    private static func context(of error: DecodingError) -> DecodingError.Context? {
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context),
            .keyNotFound(_, let context):
            context
        @unknown default: nil
        }
    }
}
