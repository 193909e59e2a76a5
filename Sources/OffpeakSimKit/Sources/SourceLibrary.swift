import Foundation
import Synchronization

/// One research source the sim serves: its bytes, type and strong ETag, or an error page.
struct SourceDocument: Sendable, Equatable {
    var body: [UInt8]
    var contentType: String
    /// 200, or the error status (400-599) the document is served with, as a page a server
    /// sends when it refuses.
    var status = 200

    /// A strong validator derived from the body alone, so the same content always has the same
    /// ETag (across restarts too) and new content gets a new one.
    var etag: String { "\"\(SourceLibrary.hash(body))\"" }
}

/// The research sources `GET /sources/{name}` serves: a deterministic document for every name,
/// unless a test replaced it through `POST /sim/sources`.
///
/// Deterministic so tests can fetch from a real HTTP server (status, ETag, redirects, types)
/// without the internet, and compare what they got with what they expect.
final class SourceLibrary: Sendable {
    /// Every document claims the same modification time, so `Last-Modified` never changes either.
    static let lastModified = "Wed, 01 Jan 2025 00:00:00 GMT"

    private let custom = Mutex<[String: SourceDocument]>([:])

    /// The document for `name`: a replaced one, or the generated one (HTML when `name` ends in
    /// `.html`, plain text otherwise).
    func document(named name: String) -> SourceDocument {
        if let document = custom.withLock({ $0[name] }) { return document }
        return name.hasSuffix(".html") ? Self.html(name: String(name.dropLast(5))) : Self.text(name: name)
    }

    /// The document a test set as `name`, if it did: what `/robots.txt` serves (else `404`).
    func uploaded(named name: String) -> SourceDocument? {
        custom.withLock { $0[name] }
    }

    /// Sets or replaces the document served as `name`.
    func set(_ name: String, content: String, contentType: String, status: Int = 200) {
        let document = SourceDocument(body: Array(content.utf8), contentType: contentType, status: status)
        custom.withLock { $0[name] = document }
    }

    /// Forgets every replaced document (`POST /sim/reset`).
    func reset() {
        custom.withLock { $0.removeAll() }
    }

    /// A few sentences that mention `name`, as plain UTF-8 text.
    static func text(name: String) -> SourceDocument {
        let body = """
            This is the research source named \(name), served by offpeak-sim.
            The source \(name) says the same thing on every fetch, so its ETag only changes when a test replaces it.
            Researchers citing \(name) should find this sentence in their context.

            """
        return SourceDocument(body: Array(body.utf8), contentType: "text/plain; charset=utf-8")
    }

    /// An HTML page about `name`, with the parts a text extractor must drop (head, style, script)
    /// and the entities it must decode.
    static func html(name: String) -> SourceDocument {
        let name = escape(name)
        let body = """
            <!DOCTYPE html>
            <html lang="en">
            <head><title>Source \(name)</title><style>p { color: #333; }</style></head>
            <body>
            <script>document.write("<p>not text</p>");</script>
            <h1>Source \(name)</h1>
            <p>This is the research source named \(name), served as HTML by offpeak-sim.</p>
            <p>Fish &amp; chips &lt;3 &quot;quoted&quot; &#39;single&#39; &#x263A;&nbsp;smile.</p>
            <ul><li>first point</li><li>second point</li></ul>
            </body>
            </html>

            """
        return SourceDocument(body: Array(body.utf8), contentType: "text/html; charset=utf-8")
    }

    /// A small PDF-looking file, to be refused by a fetcher that only reads text.
    static func binary(name: String) -> SourceDocument {
        var body = Array("%PDF-1.4\n% \(name)\n".utf8)
        body += [0xE2, 0xE3, 0xCF, 0xD3, 0x0A, 0x00, 0x01, 0x02]
        body += Array("%%EOF\n".utf8)
        return SourceDocument(body: body, contentType: "application/pdf")
    }

    /// FNV-1a, 64 bits, as hex: stable across runs and platforms, unlike `Hasher`.
    static func hash(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
