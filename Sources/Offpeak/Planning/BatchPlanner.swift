/// One provider call the executor will make: one request sent as it is, or several packed into
/// one batched prompt.
public struct PlannedCall: Sendable {
    public var requests: [RequestRecord]
    /// The id each request carries inside the batched prompt (empty when not batched).
    public var itemIDs: [String]
    /// The user message of each request, in `requests` order.
    public var itemTexts: [String]
    public var request: CompletionRequest
    public var isBatched: Bool { !itemIDs.isEmpty }
}

/// Packs pending requests into calls (DESIGN.md, lever 2).
///
/// Requests share a call only when everything but their user message is the same (model, system
/// and instructions, sampling parameters): then the shared prefix is paid once per call and
/// cached by the provider. Items of similar length go together, so one long item does not make
/// the others wait on a long answer. An item the splitter rejected before is packed into smaller
/// batches (half as many items per rejection), and finally alone.
public struct BatchPlanner: Sendable {
    public let batching: JobSpec.Batching
    /// The model's context window and longest answer, in tokens.
    public let contextWindow: Int
    public let maxOutputTokens: Int
    /// Output tokens allowed per item beyond its answer, for its id, quotes and separators.
    static let perItemOverhead = 16

    public init(batching: JobSpec.Batching, contextWindow: Int, maxOutputTokens: Int) {
        self.batching = batching
        self.contextWindow = contextWindow
        self.maxOutputTokens = maxOutputTokens
    }

    public func plan(_ pending: [(record: RequestRecord, request: CompletionRequest)]) -> [PlannedCall] {
        var groups: [String: [(record: RequestRecord, request: CompletionRequest, tokens: Int)]] = [:]
        var order: [String] = []
        for (record, request) in pending {
            var shape = request
            shape.messages = []
            shape.maxTokens = 0
            let key = RequestPlanner.canonicalJSON(shape)
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append((record, request, TokenEstimator.inputTokens(userOnly(request))))
        }
        return order.flatMap { key in pack(groups[key] ?? []) }
    }

    private func pack(_ group: [(record: RequestRecord, request: CompletionRequest, tokens: Int)])
        -> [PlannedCall]
    {
        var calls: [PlannedCall] = []
        var chunk: [(record: RequestRecord, request: CompletionRequest, tokens: Int)] = []
        func flush() {
            if !chunk.isEmpty { calls.append(call(for: chunk)) }
            chunk = []
        }
        let sorted = group.sorted { ($0.tokens, $0.record.position) < ($1.tokens, $1.record.position) }
        for entry in sorted {
            guard batching.enabled, entry.tokens <= batching.maxItemTokens, limit(entry.record) > 1 else {
                calls.append(call(for: [entry]))
                continue
            }
            let candidate = chunk + [entry]
            let fits =
                candidate.count <= candidate.map({ limit($0.record) }).min() ?? 1
                && inputTokens(candidate) <= contextWindow - outputTokens(candidate)
                && outputTokens(candidate) <= maxOutputTokens
            if fits {
                chunk = candidate
            } else {
                flush()
                chunk = [entry]
            }
        }
        flush()
        return calls
    }

    /// How many items a request may share a call with: halved by each earlier rejection.
    private func limit(_ record: RequestRecord) -> Int {
        max(1, batching.maxItems >> min(record.attempts, 16))
    }

    private func inputTokens(_ chunk: [(record: RequestRecord, request: CompletionRequest, tokens: Int)])
        -> Int
    {
        let prefix = chunk.first.map { TokenEstimator.tokens($0.request.system ?? "") } ?? 0
        return prefix + chunk.reduce(64) { $0 + $1.tokens + 12 }
    }

    private func outputTokens(_ chunk: [(record: RequestRecord, request: CompletionRequest, tokens: Int)])
        -> Int
    {
        chunk.reduce(16) { $0 + $1.request.maxTokens + BatchPlanner.perItemOverhead }
    }

    private func call(for chunk: [(record: RequestRecord, request: CompletionRequest, tokens: Int)])
        -> PlannedCall
    {
        let texts = chunk.map { $0.request.messages.last?.content ?? "" }
        guard chunk.count > 1, var request = chunk.first?.request else {
            let request = chunk.first?.request ?? CompletionRequest(model: "", messages: [], maxTokens: 1)
            return PlannedCall(requests: chunk.map(\.record), itemIDs: [], itemTexts: texts, request: request)
        }
        let ids = BatchPrompt.itemIDs(for: chunk.map(\.record.id))
        request.messages = [ChatMessage(role: .user, content: BatchPrompt.render(Array(zip(ids, texts))))]
        request.maxTokens = min(maxOutputTokens, outputTokens(chunk))
        return PlannedCall(requests: chunk.map(\.record), itemIDs: ids, itemTexts: texts, request: request)
    }

    private func userOnly(_ request: CompletionRequest) -> CompletionRequest {
        var request = request
        request.system = nil
        return request
    }
}
