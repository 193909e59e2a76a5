import Foundation

/// Explicit context caching (`GeminiContextCaches`): a long system prompt sent again and again is
/// kept in a `cachedContents` and named by each call (`cachedContent`), read at the cache price.
/// The call that made the cache books its storage: its cached tokens are reported as cache
/// writes, priced (`cache_creation_input_token_cost`) at the storage for the TTL plus a read.
extension GeminiProvider {
    func call(_ request: CompletionRequest, timeout: TimeInterval?, lane: CallLane) -> CallReply {
        guard lane == .live, let key = Self.cacheKey(request) else {
            return plain(request, timeout: timeout, lane: lane)
        }
        switch contextCaches.plan(key, now: Date()) {
        case .plain:
            return plain(request, timeout: timeout, lane: lane)
        case .use(let name):
            return cached(request, name: name, key: key, timeout: timeout, made: false)
        case .create:
            guard let (name, expires) = makeCache(request) else {
                contextCaches.failed(key)
                return plain(request, timeout: timeout, lane: lane)
            }
            contextCaches.made(key, name: name, expires: expires)
            return cached(request, name: name, key: key, timeout: timeout, made: true)
        }
    }

    /// The key of a request whose system prompt may be cached explicitly; nil when it may not.
    static func cacheKey(_ request: CompletionRequest) -> String? {
        guard request.cacheSystemPrompt, let system = request.system,
            TokenEstimator.tokens(system) >= GeminiContextCaches.minimumTokens(request.model)
        else { return nil }
        return request.model + "\u{1F}" + SHA256.hex(system)
    }

    private func plain(_ request: CompletionRequest, timeout: TimeInterval?, lane: CallLane) -> CallReply {
        send(request, lane: lane, timeout: timeout)
    }

    /// The call naming cache `name`; one refused because the cache is gone is sent plain.
    private func cached(
        _ request: CompletionRequest, name: String, key: String, timeout: TimeInterval?, made: Bool
    ) -> CallReply {
        let body: Data
        do { body = try Self.requestBody(for: request, cachedContent: name) } catch {
            return CallReply(answer: .failure(error), attempts: 0)
        }
        var reply = send(request, body: body, timeout: timeout)
        if case .failure(let error) = reply.answer,
            case .http(let status, let message, _)? = error as? ProviderError,
            [400, 403, 404].contains(status),
            message.range(of: "CachedContent", options: .caseInsensitive) != nil
        {
            contextCaches.failed(key)
            return plain(request, timeout: timeout, lane: .live)
        }
        if made, case .success(var response) = reply.answer {
            // This call made the cache: its storage is booked with it, as cache writes.
            response.usage.cacheWrite = response.usage.cacheRead
            response.usage.cacheRead = 0
            reply.answer = .success(response)
        }
        return reply
    }

    /// Makes a cache of `request`'s system prompt for `GeminiContextCaches.ttl`: its name and
    /// expiry, or nil when the server refused (the call then goes plain).
    private func makeCache(_ request: CompletionRequest) -> (String, Date)? {
        let body = JSONValue.object([
            "model": .string("models/" + Self.modelPath(request.model)),
            "systemInstruction": .object(["parts": .array([.object(["text": .string(request.system ?? "")])])]
            ),
            "ttl": .string("\(Int(GeminiContextCaches.ttl))s"),
        ])
        guard let data = try? ProviderTransport.encode(body) else { return nil }
        let url = ProviderTransport.endpoint(baseURL, "/\(Self.apiVersion)/cachedContents")
        guard
            case .success(let response) = transport.send(url, method: "POST", headers: headers, body: data)
                .response,
            let object = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any],
            let name = object["name"] as? String
        else { return nil }
        let expires = BatchExchange.date(object["expireTime"] as? String) ?? Date() + GeminiContextCaches.ttl
        return (name, expires)
    }
}
