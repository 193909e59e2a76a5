import Foundation

/// Ends provider batches when their time is up: each request is answered exactly as the live
/// endpoint would answer its body (same text, same tokens), unless a batch fault or a cancel
/// ends it first; answers are billed once, at the end, into the batch counters.
struct BatchRunner: Sendable {
    let state: SimState

    /// The job as a retrieve sees it now: ended (and billed) if its delay has passed or it was
    /// canceled; nil if there is no such job.
    func current(_ id: String, now: Date = Date()) -> BatchJob? {
        let delay = state.options.batchDelaySeconds
        // Read before the book's lock is taken: the lock is not reentrant.
        let targeted = state.batches.targetedFaults()
        return state.batches.update(id) { job in
            let due = now.timeIntervalSince(job.createdAt) >= delay || job.phase == .canceling
            if job.phase == .inProgress || job.phase == .canceling, due {
                end(&job, now: now, targeted: targeted)
            }
            return job
        }
    }

    private func end(_ job: inout BatchJob, now: Date, targeted: [String: BatchFaultKind]) {
        let canceled = job.phase == .canceling
        var results: [(customID: String, outcome: BatchOutcome)] = []
        var billed = BilledTokens()
        // The prompt cache's clock as the provider works through the batch (`--batch-spread`).
        let start = ContinuousClock.now
        let step =
            job.requests.count > 1 ? state.options.batchSpreadSeconds / Double(job.requests.count - 1) : 0
        for (index, request) in job.requests.enumerated() {
            let outcome: BatchOutcome
            if canceled {
                outcome = .canceled
            } else if let fault = targeted[request.customID] ?? drawnFault(for: request.customID) {
                switch fault {
                case .errored:
                    outcome = .errored(SimAPIError(.server, "offpeak-sim: simulated batch request error"))
                case .expired: outcome = .expired
                case .canceled: outcome = .canceled
                }
            } else {
                let (answered, tokens) = answer(
                    request, api: job.api, model: job.model ?? "",
                    responses: job.endpoint == OpenAIBatchRoutes.responsesEndpoint,
                    at: start.advanced(by: .seconds(step * Double(index))))
                outcome = answered
                billed = billed + tokens
            }
            results.append((request.customID, outcome))
        }
        // Gemini documents its inlined responses in the order of the requests.
        job.results = job.api == .gemini ? results : shuffled(results, batchID: job.id)
        job.phase = .ended
        job.endedAt = now
        let ended = job
        state.stats.recordBatchEnd(billed: billed, counts: ended.counts)
    }

    /// The answer the live endpoint gives this body, and the tokens it bills.
    ///
    /// Anthropic applies prompt caching inside Message Batches, and its discounts stack with the
    /// batch price: a request's `cache_control` prefix is billed as the live endpoint bills it,
    /// from the same prompt cache (the batch's first request with a prefix writes it, the rest
    /// read it). An OpenAI batch bills every input token uncached, as before: the sim does not
    /// model OpenAI's automatic caching inside the Batch API.
    /// - Parameters:
    ///   - responses: an OpenAI batch of the Responses API's requests.
    ///   - at: the instant of the provider's clock the request is answered at.
    private func answer(
        _ request: BatchRequest, api: BatchAPI, model: String, responses: Bool,
        at instant: ContinuousClock.Instant
    ) -> (BatchOutcome, BilledTokens) {
        let routes: any CompletionAPI =
            switch api {
            case .anthropic: AnthropicRoutes()
            case .openAI: responses ? ResponsesRoutes() : OpenAIRoutes()
            case .gemini: GeminiRoutes(model: model)
            case .mistral: MistralRoutes()
            }
        let call: ParsedCall
        do {
            call = try routes.parse(request.body)
        } catch let error as SimAPIError {
            return (.errored(error), BilledTokens())
        } catch {
            return (.errored(SimAPIError(.invalidRequest, "invalid request: \(error)")), BilledTokens())
        }
        if let refusal = state.refusal(of: call) { return (.errored(refusal), BilledTokens()) }
        let (answer, _) = state.composeAnswer(call)
        let billing = call.withSearchResults(
            api == .anthropic
                ? state.cacheBook.bill(
                    api: routes.cacheAPI, model: call.model, inputTokens: call.conversation.inputTokens,
                    prefix: routes.cacheablePrefix(of: call.conversation), now: instant)
                : InputBilling(uncached: call.conversation.inputTokens))
        let body = routes.answerBody(for: call, answer: answer, billing: billing, at: state.now())
        return (
            .succeeded(Data(body.readableBytesView)),
            BilledTokens(billing, outputTokens: answer.outputTokens, searches: call.searches.count)
        )
    }

    /// A fault drawn from the batch fault rates, the same for a `custom_id` under the same seed.
    private func drawnFault(for customID: String) -> BatchFaultKind? {
        let options = state.options
        guard options.batchErrorRate + options.batchExpireRate + options.batchCancelRate > 0 else {
            return nil
        }
        var generator = SplitMix64(seed: state.seed ^ stableHash(customID))
        let draw = generator.nextUnitDouble()
        if draw < options.batchErrorRate { return .errored }
        if draw < options.batchErrorRate + options.batchExpireRate { return .expired }
        if draw < options.batchErrorRate + options.batchExpireRate + options.batchCancelRate {
            return .canceled
        }
        return nil
    }

    /// Results in an order that is repeatable but never the submission order (for two or more),
    /// as the providers document that results may come in any order.
    private func shuffled<T>(_ items: [T], batchID: String) -> [T] {
        guard items.count > 1 else { return items }
        var generator = SplitMix64(seed: state.seed ^ stableHash(batchID))
        let order = Array(items.indices).shuffled(using: &generator)
        let moved = order == Array(items.indices) ? Array(order.dropFirst() + order.prefix(1)) : order
        return moved.map { items[$0] }
    }
}
