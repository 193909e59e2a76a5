/// One provider call the executor will make: one request sent as it is, or several packed into
/// one batched prompt.
struct PlannedCall: Sendable {
    var requests: [RequestRecord]
    /// The id each request carries inside the batched prompt (empty when not batched).
    var itemIDs: [String]
    /// The user message of each request, in `requests` order.
    var itemTexts: [String]
    var request: CompletionRequest
    /// Places (from 0) of a batched call's items the audit asks again alone once it is answered
    /// (`AuditSampling`).
    var auditing: [Int] = []
    /// Whether `auditing` is a probe of a size not yet proven (`AuditSampling.probePositions`),
    /// not a sample.
    var auditProbe = false
    /// For an audit call: the batched answer it checks (`AuditTarget`).
    var audit: AuditTarget?
    var isBatched: Bool { !itemIDs.isEmpty }
}

/// Packs pending requests into calls (DESIGN.md, lever 2).
///
/// Requests share a call only when everything but their user message is the same (model, system
/// and instructions, sampling parameters): then the shared prefix is paid once per call and
/// cached by the provider. Items of similar length go together, so one long item does not make
/// the others wait on a long answer. An item the splitter rejected before is packed into smaller
/// batches (half as many items per rejection), and finally alone.
///
/// Batching has a price too: each item adds its tags to the prompt and its id and quotes to the
/// answer, and the format instructions are paid once per call. A group whose shared prefix is too
/// short to repay that is not batched (`worthBatching`), so batching never costs more than it saves.
struct BatchPlanner: Sendable {
    let batching: JobSpec.Batching
    /// The model's context window and longest answer, in tokens.
    let contextWindow: Int
    let maxOutputTokens: Int
    /// What an output token costs in input tokens (output price / input price).
    let outputWeight: Double
    /// The structured-output form batched prompts ask for their answer in
    /// (`CompletionRequest.answerKeys`); nil: plain.
    var answerForm: StructuredForm?
    /// Output tokens allowed per item beyond its answer, for its id, quotes and separators.
    static let perItemOverhead = 16
    /// Tokens a batch adds: per item, its tags in the prompt and its key and quotes in the answer;
    /// per call, the format instructions.
    static let itemInputOverhead = 12.0
    static let itemOutputOverhead = 6.0
    static let callInputOverhead = 64.0

    init(
        batching: JobSpec.Batching, contextWindow: Int, maxOutputTokens: Int, outputWeight: Double = 5
    ) {
        self.batching = batching
        self.contextWindow = contextWindow
        self.maxOutputTokens = maxOutputTokens
        self.outputWeight = outputWeight
    }

    /// Whether sharing a prefix of `prefixTokens` among full batches saves more than the batch
    /// format adds, in input-token equivalents per item.
    func worthBatching(prefixTokens: Int) -> Bool {
        let items = Double(max(1, batching.maxItems))
        let saved = Double(prefixTokens) * (1 - 1 / items)
        let added =
            BatchPlanner.itemInputOverhead + BatchPlanner.itemOutputOverhead * outputWeight
            + BatchPlanner.callInputOverhead / items
        return saved > added
    }

    func plan(_ pending: [(record: RequestRecord, request: CompletionRequest)]) -> [PlannedCall] {
        // Groups in the order they first appear, found by a cheap key and then compared whole: a
        // shape holds the system prompt, often kilobytes, the same for a job's every request.
        var groups: [(shape: CompletionRequest, members: [Member])] = []
        var byKey: [ShapeKey: [Int]] = [:]
        for (record, request) in pending {
            var shape = request
            shape.messages = []
            shape.maxTokens = 0
            // Requests with other tags never share a call: its spend is counted under its tags.
            let key = ShapeKey(
                model: shape.model, systemBytes: shape.system?.utf8.count ?? -1, tags: record.tags ?? "")
            let member = (record, request, TokenEstimator.inputTokens(userOnly(request)))
            if let index = byKey[key]?.first(where: { groups[$0].shape == shape }) {
                groups[index].members.append(member)
            } else {
                byKey[key, default: []].append(groups.count)
                groups.append((shape, [member]))
            }
        }
        return groups.flatMap { pack($0.members) }
    }

    private typealias Member = (record: RequestRecord, request: CompletionRequest, tokens: Int)

    /// What tells most shapes apart without reading their prompts.
    private struct ShapeKey: Hashable {
        let model: String
        let systemBytes: Int
        let tags: String
    }

    private func pack(_ group: [Member]) -> [PlannedCall] {
        var calls: [PlannedCall] = []
        var chunk: [Member] = []
        func flush() {
            if !chunk.isEmpty { calls.append(call(for: chunk)) }
            chunk = []
        }
        let sorted = group.sorted { ($0.tokens, $0.record.position) < ($1.tokens, $1.record.position) }
        let prefix = TokenEstimator.tokens(group.first?.request.system ?? "")
        // A call that searches the web asks for one item: its citations are the item's.
        let searches = group.first?.request.searchUses != nil
        let batchable = batching.enabled && !searches && worthBatching(prefixTokens: prefix)
        for entry in sorted {
            guard batchable, entry.tokens <= batching.maxItemTokens, limit(entry.record) > 1 else {
                calls.append(call(for: [entry]))
                continue
            }
            let candidate = chunk + [entry]
            let fits =
                candidate.count <= candidate.map({ limit($0.record) }).min() ?? 1
                && inputTokens(candidate, prefix: prefix) <= contextWindow - outputTokens(candidate)
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

    /// A chunk's input tokens, its shared prefix (`prefix` tokens) once.
    private func inputTokens(_ chunk: [Member], prefix: Int) -> Int {
        prefix + chunk.reduce(64) { $0 + $1.tokens + 12 }
    }

    private func outputTokens(_ chunk: [Member]) -> Int {
        chunk.reduce(16) { $0 + $1.request.maxTokens + BatchPlanner.perItemOverhead }
    }

    /// The call that carries `requests` as they are, in this order: what `plan` made of them, made
    /// again (a provider batch's results are read against the call that was sent).
    func call(carrying requests: [(record: RequestRecord, request: CompletionRequest)]) -> PlannedCall {
        call(for: requests.map { ($0.record, $0.request, TokenEstimator.inputTokens(userOnly($0.request))) })
    }

    private func call(for chunk: [Member]) -> PlannedCall {
        let texts = chunk.map { $0.request.messages.last?.content ?? "" }
        guard chunk.count > 1, var request = chunk.first?.request else {
            let request = chunk.first?.request ?? CompletionRequest(model: "", messages: [], maxTokens: 1)
            return PlannedCall(requests: chunk.map(\.record), itemIDs: [], itemTexts: texts, request: request)
        }
        let ids = BatchPrompt.itemIDs(count: chunk.count)
        request.messages = [ChatMessage(role: .user, content: BatchPrompt.render(Array(zip(ids, texts))))]
        request.maxTokens = min(maxOutputTokens, outputTokens(chunk))
        request.answerKeys = answerForm == nil ? nil : ids
        request.answerForm = answerForm == .jsonObject ? .jsonObject : nil  // nil: the first form
        return PlannedCall(requests: chunk.map(\.record), itemIDs: ids, itemTexts: texts, request: request)
    }

    private func userOnly(_ request: CompletionRequest) -> CompletionRequest {
        var request = request
        request.system = nil
        return request
    }
}
