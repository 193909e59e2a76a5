import Foundation
import Hummingbird

/// What the batch routes of both APIs share: reading a body, checking the key, answering
/// JSON built from plain dictionaries (the batch objects have many nullable fields).
struct BatchHTTP: Sendable {
    /// The providers accept batch bodies up to 256 MB.
    static let maxBodyBytes = 256 * 1024 * 1024

    let state: SimState
    let api: any CompletionAPI

    var runner: BatchRunner { BatchRunner(state: state) }

    /// The request's body, or the error answer: a bad key or a body too large.
    func body(of request: Request) async -> Result<Data, SimAPIError> {
        if let key = state.options.requireKey, api.presentedKey(in: request.headers) != key {
            return .failure(SimAPIError(.authentication, "invalid API key"))
        }
        var request = request
        do {
            return .success(Data(try await request.collectBody(upTo: Self.maxBodyBytes).readableBytesView))
        } catch {
            return .failure(SimAPIError(.tooLarge, "request body is larger than 256 MiB or was cut off"))
        }
    }

    /// Serves `respond` with the body, answering any `SimAPIError` it throws in the API's shape.
    func serve(_ request: Request, _ respond: (Data) throws -> Response) async -> Response {
        switch await body(of: request) {
        case .failure(let error): return api.errorResponse(error)
        case .success(let data):
            do {
                return try respond(data)
            } catch let error as SimAPIError {
                return api.errorResponse(error)
            } catch {
                return api.errorResponse(SimAPIError(.invalidRequest, "\(error)"))
            }
        }
    }

    /// Under `--results-status` (or `POST /sim/results-status`), the error every results download
    /// answers, in a shape both SDKs read; nil otherwise.
    func refusedDownload() -> Response? {
        guard let status = state.batches.refusedDownloadStatus else { return nil }
        let kind: SimAPIError.Kind =
            switch status {
            case 401, 403: .authentication
            case 404, 410: .notFound
            case 500...599: .server
            default: .invalidRequest
            }
        return SimAPIError(kind, "offpeak-sim refuses results downloads (--results-status \(status))")
            .neutralResponse(status: status)
    }

    func json(_ object: [String: Any]) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: Self.encode(object))))
    }

    static func encode(_ object: Any) -> Data {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
            ?? Data("{}".utf8)
    }

    /// A JSON object from the wire, or a 400 naming what was expected.
    static func object(_ data: Data, what: String) throws -> [String: Any] {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw SimAPIError(.invalidRequest, "\(what): expected a JSON object")
        }
        return object
    }

    /// The `limit` query parameter: 1...1000, default 20.
    static func limit(_ request: Request) throws -> Int {
        guard let text = request.uri.queryParameters.get("limit") else { return 20 }
        guard let limit = Int(text), (1...1000).contains(limit) else {
            throw SimAPIError(.invalidRequest, "limit: expected an integer in 1...1000, got \(text)")
        }
        return limit
    }

    static func notFound(_ what: String, _ id: String) -> SimAPIError {
        SimAPIError(.notFound, "\(what) \(id) not found")
    }
}
