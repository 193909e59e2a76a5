import Foundation

/// The parts of a `multipart/form-data` body, as `POST /v1/files` receives them: each field's
/// name, its filename when it is a file, and its bytes.
struct MultipartForm: Sendable {
    struct Part: Sendable {
        var name: String
        var filename: String?
        var data: Data
    }

    var parts: [Part]

    /// - Throws: `SimAPIError` (400) for a body that is not multipart or has no boundary.
    init(body: Data, contentType: String?) throws {
        guard let contentType, contentType.lowercased().hasPrefix("multipart/form-data"),
            let range = contentType.range(of: "boundary=")
        else {
            throw SimAPIError(.invalidRequest, "content-type: expected multipart/form-data with a boundary")
        }
        var boundary = String(contentType[range.upperBound...].prefix { $0 != ";" })
        boundary = boundary.trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
        let delimiter = Data("--\(boundary)".utf8)
        let headerEnd = Data("\r\n\r\n".utf8)
        var parts: [Part] = []
        var chunks: [Data] = []
        var rest = body[...]
        while let found = rest.range(of: delimiter) {
            chunks.append(Data(rest[rest.startIndex..<found.lowerBound]))
            rest = rest[found.upperBound...]
        }
        for chunk in chunks.dropFirst() {
            guard let split = chunk.range(of: headerEnd) else { continue }
            let head = String(decoding: chunk[chunk.startIndex..<split.lowerBound], as: UTF8.self)
            var data = Data(chunk[split.upperBound...])
            if data.suffix(2) == Data("\r\n".utf8) { data.removeLast(2) }
            guard let name = Self.attribute("name", in: head) else { continue }
            parts.append(Part(name: name, filename: Self.attribute("filename", in: head), data: data))
        }
        self.parts = parts
    }

    func part(_ name: String) -> Part? {
        parts.first { $0.name == name }
    }

    /// `name="value"` in a part's `Content-Disposition` header.
    private static func attribute(_ key: String, in head: String) -> String? {
        for marker in ["; \(key)=\"", ";\(key)=\""] {
            guard let start = head.range(of: marker) else { continue }
            let tail = head[start.upperBound...]
            return String(tail.prefix { $0 != "\"" })
        }
        return nil
    }
}
