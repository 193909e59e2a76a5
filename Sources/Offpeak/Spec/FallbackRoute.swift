import Foundation
import Yams

/// One step of a fallback chain (`fallbacks:` in offpeak.yaml, or a job's own): where calls go while
/// the provider and model before it cannot answer (down, overloaded, out of quota). Each field left
/// out is the workspace's: its provider, that provider's model for the job's tier, its base URL and
/// its key variable.
struct FallbackRoute: Sendable, Equatable, Hashable, Codable {
    /// Another provider, or nil for the workspace's own (another model of it).
    var provider: ProviderKind?
    /// The model, or nil for the provider's model for the tier (`models:`, else its own default).
    var model: String?
    /// The provider's base URL, or nil for its usual one (its `*_BASE_URL` variable, else its API's).
    var baseURL: String?
    /// The environment variable holding its key (`key_env`), or nil for the provider's usual one.
    var keyVariable: String?

    init(
        provider: ProviderKind? = nil, model: String? = nil, baseURL: String? = nil,
        keyVariable: String? = nil
    ) {
        self.provider = provider
        self.model = model
        self.baseURL = baseURL
        self.keyVariable = keyVariable
    }

    /// The fields of one step, as offpeak.yaml and job specs spell them.
    static let fields = ["provider", "model", "base_url", "key_env"]

    /// Reads a chain: a list of steps, each a mapping of `fields` naming at least a provider, a model
    /// or a base URL (the same provider and model behind another proxy or region).
    static func chain(_ node: Node, at field: String, reader: YAMLNodeReader)
        throws(OffpeakError) -> [FallbackRoute]
    {
        var chain: [FallbackRoute] = []
        for (index, element) in try reader.list(node, at: field).enumerated() {
            let path = "\(field)[\(index)]"
            let step = try reader.mapping(element, at: path, allowed: fields)
            var route = FallbackRoute()
            route.provider = try step.choice("provider", as: ProviderKind.self)
            route.model = try step.nonEmptyString("model")
            route.baseURL = try step.httpURL("base_url")
            if let name = try step.string("key_env") {
                guard Self.isVariableName(name) else {
                    throw reader.error(
                        step.path("key_env"),
                        "expected an environment variable's name (such as BACKUP_KEY), got '\(name)'",
                        at: step.value("key_env"))
                }
                route.keyVariable = name
            }
            guard route.provider != nil || route.model != nil || route.baseURL != nil else {
                throw reader.error(
                    path, "a fallback names a provider, a model or a base URL (or more of them)", at: element)
            }
            chain.append(route)
        }
        return chain
    }

    /// Letters, digits and underscores, not starting with a digit.
    static func isVariableName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, !CharacterSet.decimalDigits.contains(first) else {
            return false
        }
        return name.unicodeScalars.allSatisfy {
            $0 == "_" || ($0.isASCII && CharacterSet.alphanumerics.contains($0))
        }
    }
}
