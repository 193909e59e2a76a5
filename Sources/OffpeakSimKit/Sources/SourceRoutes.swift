import Foundation
import Hummingbird

/// Research sources for tests of the source fetcher, served like a small, well-behaved website:
///
/// - `GET /sources/{name}`: the document (`SourceLibrary`), with a strong `ETag` and a fixed
///   `Last-Modified`; an `If-None-Match` naming the current ETag gets `304` and no body.
///   (`If-Modified-Since` is ignored, as RFC 9110 allows: the ETag is the validator.)
/// - `GET /sources/redirect/{name}`: `302` to `/sources/{name}`.
/// - `GET /sources/moved/{name}`, `GET /sources/moved308/{name}`: `301` or `308` to
///   `/sources/{name}`, a page that has moved for good.
/// - `GET /robots.txt`: the document a test set as `robots.txt` (with its ETag, and `304` as
///   above), else `404`; counted in `sources` as `robots`, not as a fetch.
/// - `GET /sources/binary/{name}`: a PDF, for the fetcher to refuse.
/// - `GET /sources/status/{code}`: that status (400–599) with a short text body.
/// - `POST /sim/sources` with `{"name": ..., "content": ..., "content_type": "text/plain"}`: sets
///   or replaces a document; new content means a new ETag. With `"status": 400-599` the document
///   is an error page, served with that status (and no validators) on every fetch.
///
/// Source requests are not API calls: they are counted only in `/sim/stats` `sources`, never
/// faulted or billed.
struct SourceRoutes: Sendable {
    let state: SimState

    private struct Upload: Decodable {
        var name: String
        var content: String
        var contentType: String?
        var status: Int?

        enum CodingKeys: String, CodingKey {
            case name, content, status
            case contentType = "content_type"
        }
    }

    private struct UploadAnswer: Encodable {
        var name: String
        var etag: String
    }

    func register(on router: Router<some RequestContext>) {
        router.get("/sources/{name}") { request, context in
            serve(state.sources.document(named: try context.parameters.require("name")), to: request)
        }
        router.get("/sources/binary/{name}") { request, context in
            serve(SourceLibrary.binary(name: try context.parameters.require("name")), to: request)
        }
        router.get("/sources/redirect/{name}") { request, _ in
            let target = request.uri.path.replacingOccurrences(of: "/sources/redirect/", with: "/sources/")
            return Response(status: .found, headers: [.location: target])
        }
        router.get("/sources/moved/{name}") { request, _ in
            let target = request.uri.path.replacingOccurrences(of: "/sources/moved/", with: "/sources/")
            return Response(status: .movedPermanently, headers: [.location: target])
        }
        router.get("/sources/moved308/{name}") { request, _ in
            let target = request.uri.path.replacingOccurrences(of: "/sources/moved308/", with: "/sources/")
            return Response(status: .permanentRedirect, headers: [.location: target])
        }
        router.get("/robots.txt") { request, _ in
            guard let document = state.sources.uploaded(named: "robots.txt") else {
                state.stats.recordRobotsFetch()
                return Response(
                    status: .notFound, headers: [.contentType: "text/plain; charset=utf-8"],
                    body: .init(byteBuffer: ByteBuffer(string: "no robots.txt\n")))
            }
            return serve(document, to: request, robots: true)
        }
        router.get("/sources/status/{code}") { _, context in
            let code = try context.parameters.require("code", as: Int.self)
            guard (400...599).contains(code) else { throw HTTPError(.badRequest, message: "status 400-599") }
            state.stats.recordSourceFetch(notModified: false)
            return Response(
                status: .init(code: code), headers: [.contentType: "text/plain; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: "status \(code)\n")))
        }
        router.post("/sim/sources") { request, _ in
            await upload(request)
        }
    }

    /// The document, or `304` when the client's `If-None-Match` names its current ETag; counted
    /// as a fetch, or with `robots` as a robots.txt request.
    private func serve(_ document: SourceDocument, to request: Request, robots: Bool = false) -> Response {
        let record = { (notModified: Bool) in
            if robots {
                state.stats.recordRobotsFetch()
            } else {
                state.stats.recordSourceFetch(notModified: notModified)
            }
        }
        if document.status != 200 {
            record(false)
            return Response(
                status: SimAPIError.status(document.status), headers: [.contentType: document.contentType],
                body: .init(byteBuffer: ByteBuffer(bytes: document.body)))
        }
        var headers: HTTPFields = [.eTag: document.etag, .lastModified: SourceLibrary.lastModified]
        let matches = request.headers[.ifNoneMatch].map { Self.matches($0, etag: document.etag) } ?? false
        record(matches)
        if matches { return Response(status: .notModified, headers: headers) }
        headers[.contentType] = document.contentType
        return Response(
            status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: document.body)))
    }

    /// `If-None-Match` uses the weak comparison (RFC 9110 13.1.2): `W/` is ignored, `*` matches.
    static func matches(_ header: String, etag: String) -> Bool {
        header.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            return tag == "*" || (tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag) == etag
        }
    }

    private func upload(_ request: Request) async -> Response {
        var request = request
        do {
            let body = try await request.collectBody(upTo: 16 * 1024 * 1024)
            let upload = try JSONBody.decode(Upload.self, from: Data(body.readableBytesView))
            guard !upload.name.isEmpty, !upload.name.contains("/") else {
                throw SimAPIError(.invalidRequest, "name: expected a non-empty name without '/'")
            }
            let status = upload.status ?? 200
            guard status == 200 || (400...599).contains(status) else {
                throw SimAPIError(.invalidRequest, "status: expected 200 or 400-599, got \(status)")
            }
            let type = upload.contentType ?? "text/plain; charset=utf-8"
            state.sources.set(upload.name, content: upload.content, contentType: type, status: status)
            let etag = state.sources.document(named: upload.name).etag
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: JSONBody.encode(UploadAnswer(name: upload.name, etag: etag))))
        } catch let error as SimAPIError {
            return error.neutralResponse(status: 400)
        } catch {
            return SimAPIError(.invalidRequest, "\(error)").neutralResponse(status: 400)
        }
    }
}
