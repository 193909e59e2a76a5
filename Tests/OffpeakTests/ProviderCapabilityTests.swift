import Foundation
import Logging
import Testing

@testable import Offpeak

/// Providers declare what they can do (`ProviderCapabilities`), and the rest of offpeak asks that,
/// never which provider it is: adding a provider touches its own files and one registration.
struct ProviderCapabilityTests {
    /// What begins the names of each registered provider's own files: what the names its providers
    /// describe themselves by share, without `Provider` (`AnthropicProvider`: Anthropic*.swift;
    /// `OpenAIProvider` for servers elsewhere and `OpenAIResponsesProvider` at OpenAI itself:
    /// OpenAI*.swift; `GroqProvider`, a `ChatCompletionsProvider` of the Groq dialect: Groq*.swift), as
    /// providers of it made now, at its own base URL and at one on this machine, say.
    static let ownPrefixes: [String: String] = Dictionary(
        uniqueKeysWithValues: ProviderRegistry.builtIn.map { registration in
            // A provider's name as it describes itself (`GroqProvider(…)`): its own type, or the
            // dialect of `ChatCompletionsProvider` it is.
            let types = [registration.capabilities.environment.defaultBaseURL, "http://127.0.0.1:8080/v1"].map
            {
                String(
                    String(describing: registration.make(nil, $0, ProviderOptions(), Logger(label: "test")))
                        .prefix { $0 != "(" })
            }
            let shared = String(
                zip(types[0], types[1]).prefix { $0 == $1 }.map(\.0))
            return (registration.name, shared.replacingOccurrences(of: "Provider", with: ""))
        })

    /// The files that may name a provider kind's cases: the registered providers' own, and the
    /// registry's.
    static func isProvidersOwn(_ file: String) -> Bool {
        let name = (file as NSString).lastPathComponent
        return file.hasPrefix("Providers/")
            && (ownPrefixes.values.contains { name.hasPrefix($0) }
                || ["ProviderRegistry.swift", "ProviderKind.swift"].contains(name))
    }

    @Test func everyRegisteredProviderHasItsOwnFiles() throws {
        #expect(
            Self.ownPrefixes == [
                "anthropic": "Anthropic", "openai": "OpenAI", "sim": "Anthropic", "gemini": "Gemini",
                "deepseek": "DeepSeek", "groq": "Groq", "mistral": "Mistral",
            ])
        let files = try FileManager.default.contentsOfDirectory(
            atPath: LayerTests.library.appendingPathComponent("Providers").path)
        for (kind, prefix) in Self.ownPrefixes {
            #expect(files.contains("\(prefix)Provider+Capabilities.swift"), "\(kind)")
        }
    }

    @Test func nothingOutsideTheProvidersOwnFilesSwitchesOnTheKind() throws {
        // `== .openai`, `!= .sim`, `case .gemini`, `case (.openai, …)`: a decision on the kind, for
        // every registered kind.
        let kinds = ProviderKind.allCases.map(\.rawValue).joined(separator: "|")
        #expect(kinds == "anthropic|openai|sim|gemini|deepseek|groq|mistral")
        let switchOnKind = try Regex(#"([=!]=\s*\.|case\s*\(?\s*\.)("# + kinds + #")\b"#)
        let manager = FileManager.default
        let root = LayerTests.library
        let files = (manager.enumerator(atPath: root.path)?.allObjects as? [String] ?? [])
            .filter { $0.hasSuffix(".swift") }.sorted()
        #expect(files.count > 100, "the library's sources were found")
        var found: [String] = []
        for file in files where !Self.isProvidersOwn(file) {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") && line.contains(switchOnKind) {
                found.append("\(file):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        #expect(found.isEmpty, "ask ProviderCapabilities instead:\n\(found.joined(separator: "\n"))")
    }

    @Test func eachKindDeclaresWhatTheCodeAsks() {
        let anthropic = ProviderKind.anthropic.capabilities
        let openai = ProviderKind.openai.capabilities
        let sim = ProviderKind.sim.capabilities
        #expect(anthropic.structured.forms == [.jsonSchema] && !anthropic.structured.fromTheStart)
        #expect(openai.structured.forms == [.jsonSchema, .jsonObject] && openai.structured.fromTheStart)
        #expect(anthropic.promptCache == .marked && sim.promptCache == .marked)
        #expect(openai.promptCache == .automatic(minimumTokens: 1024))
        #expect(sim.batchesOnThisMachine && !anthropic.batchesOnThisMachine && !openai.batchesOnThisMachine)
        #expect(anthropic.environment.key == "ANTHROPIC_API_KEY" && sim.environment.key == nil)
        #expect(openai.environment.baseURL == ["OPENAI_BASE_URL"])
        #expect(sim.structured == anthropic.structured && sim.models == anthropic.models)
        // What the code reads from them.
        let limits = ProviderLimits()
        #expect(limits.inFlight(for: .sim, baseURL: "http://127.0.0.1:8089") == 8)
        #expect(limits.inFlight(for: .openai, baseURL: "http://127.0.0.1:8080") == 1)
        #expect(limits.inFlight(for: .openai, baseURL: "https://api.openai.com/v1") == 8)
        #expect(WorkspaceConfig().model(for: .fast, provider: .openai) == "gpt-4o-mini")
        #expect(WorkspaceConfig().model(for: .powerful, provider: .sim) == "claude-opus-4-1")
        #expect(
            ProviderCapabilities.Structured(forms: [.jsonSchema], fromTheStart: false, wire: .forcedTool)
                .name(.jsonSchema) == "(a forced tool)")
        #expect(openai.structured.name(.jsonObject) == "json_object")
    }
}
