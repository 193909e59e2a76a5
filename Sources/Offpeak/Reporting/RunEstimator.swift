import Foundation

/// Plans a job's work as `offpeak run` would, without sending or writing anything (DESIGN.md's
/// data flow up to the provider): the items (and an unfinished run's pending requests), the
/// answers the cache already holds under the same keys, long documents' chunks, and the calls the
/// run's own `BatchPlanner` packs them into, round by round, for the live lane and the batch lane.
/// The store is only read, through a connection that cannot write.
struct RunEstimator {
    /// One request the run would hold, and what the cache or the model's limits make of it.
    struct Entry {
        var record: RequestRecord
        var request: CompletionRequest
        var cached: CachedAnswer?
        var refused: Bool
    }

    let spec: JobSpec
    let model: String
    let provider: any CompletionProvider
    let config: WorkspaceConfig
    let prices: PriceTable
    let store: Store?
    let cache: ResponseCache?
    /// `--no-cache` or `--refresh`: the run would read no cached answer.
    let cachePolicy: RequestRecord.CachePolicy
    let now: Date

    func estimate() throws(OffpeakError) -> RunEstimate {
        let open = try store?.runs.latestResumableRun(job: spec.name)
        let answers = try AnswerLength.measure(store: store, job: spec.name, model: model)
        var work = try EstimateWork.gather(self, open: open, answers: answers)
        let lane = LaneChoice.choose(
            spec: spec, model: model, prices: prices, workspaceLane: config.lane, batchAPI: config.batchAPI,
            provider: provider,
            deadlineAt: open?.deadlineAt ?? spec.deadline.map { now + $0 }, now: now)
        let latency = try store?.ledger.latency(model: model)
        var live = try tally(work.rounds, lane: .live, answers: answers, latency: latency)
        // Live calls keep the 5-minute default unless the job asks for the hour, its schedule runs
        // it again within the hour, or its calls start more than five minutes apart, as the run
        // chooses (`PromptCacheTTL.forLive`, `forPass`).
        let marked = work.rounds.joined().first { $0.request.cacheSystemPrompt }?.request
        let liveTTL =
            PromptCacheTTL.forLive(spec, now: now)
            ?? marked.flatMap { request in
                PromptCacheTTL.forPass(
                    request, inputTokens: TokenEstimator.inputTokens(request), latency: latency,
                    inFlight: config.limits(for: provider.kind).inFlight(
                        for: provider.kind, baseURL: provider.baseURL))
            }
        if liveTTL == .oneHour { live = live.withPrefixCache(.hour) }
        var batch =
            provider.batches == nil
            ? nil : try tally(work.rounds, lane: .batch, answers: answers, latency: nil)
        if let counted = batch, counted.markedReads > 0 || spec.promptCacheTTL == .oneHour {
            // A batch's calls land over hours: the prefix they share is cached for an hour unless
            // the job asks for five minutes (`PromptCacheTTL.forBatch`).
            let hour = counted.withPrefixCache(.hour)
            if spec.promptCacheTTL != .fiveMinutes { batch = hour }
            if lane.lane == .batch {
                let apart = counted.withPrefixCache(.fiveMinutesApart)
                work.notes.append(
                    "batch lane's prompt cache: an hour (written at twice the input price) "
                        + "\(Money.dollars(hour.dollars)); the 5-minute default \(Money.dollars(counted.dollars)) "
                        + "if the provider answers the calls within five minutes of each other, "
                        + "\(Money.dollars(apart.dollars)) if not (each writes it again)")
            }
        }
        // Flex plans the live lane's calls, at the flex prices.
        let flex =
            FlexLane.takes(model, provider: provider, prices: prices)
            ? try tally(work.rounds, lane: .flex, answers: answers, latency: nil) : nil
        let naive = naiveTally(work.naive, answers: answers)
        let limits = config.limits(for: provider.kind)
        let inFlight = limits.inFlight(for: provider.kind, baseURL: provider.baseURL)
        var wall = live.callSeconds.map { max($0 / Double(max(1, inFlight)), live.longestCall) }
        if let wallSeconds = wall, let perMinute = limits.requestsPerMinute, perMinute > 0 {
            wall = max(wallSeconds, Double(live.calls) / Double(perMinute) * 60)
        }
        if spec.sources.isEmpty == false || spec.items.contains(where: { !$0.sources.isEmpty }) {
            work.notes.append(
                "research sources are not fetched by an estimate: prompts are counted without them")
        }
        if !spec.feeds.isEmpty {
            let most = spec.maxNew.map { ", at most \($0) a run (max_new)," } ?? ""
            let digest = spec.digest == nil ? "" : ", nor the digest over them"
            work.notes.append(
                "feeds are not read by an estimate: their new entries\(most) are not counted\(digest)")
        }
        if let audit = try auditRecord() {
            work.notes.append("batch audit: " + AuditLine(audit, now: now).estimateSentence)
        }
        let chosen: RunEstimate.Lane?
        let chosenTally: LaneTally?
        switch lane.lane {
        case .live: chosenTally = live
        case .batch: chosenTally = batch
        case .flex: chosenTally = flex
        }
        chosen = chosenTally.map(RunEstimate.Lane.init)
        if let note = chosenTally?.audits?.note { work.notes.append(note) }
        var estimate = RunEstimate(
            job: spec.name, provider: provider.kind.rawValue, model: model,
            lane: lane.lane.rawValue, laneNote: lane.why, resumesRun: open?.id,
            itemsDoneBefore: work.doneBefore, items: work.items, itemsCached: work.itemsCached,
            itemsToAsk: work.items - work.itemsCached - work.itemsRefused, itemsRefused: work.itemsRefused,
            itemsInBatch: work.inBatch, longDocuments: work.longDocuments, chunks: work.chunks,
            stepsCached: work.stepsCached, outputTokensPerItem: answers.tokens(maxTokens: spec.maxTokens),
            outputBasis: answers.basis.rawValue,
            outputNote: answers.sentence(model: model, job: spec.name, maxTokens: spec.maxTokens),
            live: RunEstimate.Lane(live), batch: batch.map(RunEstimate.Lane.init),
            naive: RunEstimate.Lane(naive),
            dollars: chosen?.dollars ?? 0, unpriced: prices.cost(of: model) == nil,
            searchesPriced: prices.cost(of: model)?.perSearch != nil, wallSeconds: wall,
            inFlight: inFlight, notes: work.notes)
        estimate.flex = flex.map(RunEstimate.Lane.init)
        let lanes =
            [(CallLane.live, live)] + (batch.map { [(.batch, $0)] } ?? [])
            + (flex.map { [(.flex, $0)] } ?? [])
        if let plans = try plans(
            lanes: lanes, chosen: lane.lane, wall: wall, items: estimate.itemsToAsk, inFlight: inFlight,
            deadline: open?.deadlineAt ?? spec.deadline.map { now + $0 })
        {
            estimate.plans = plans.plans
            estimate.planNote = plans.note
            estimate.plansTimeZone = prices.cost(of: model)?.windows?.timeZone.identifier
            estimate.dollars = plans.plans.first(where: \.takes)?.dollars ?? estimate.dollars
        }
        return estimate
    }

    /// The calls of every round through one lane, as the run plans them: a round's requests are
    /// read `CallPlanning.roundLimit` at a time in item order, and those neither cached nor refused
    /// are packed by the run's planner for their model.
    private func tally(
        _ rounds: [[Entry]], lane: CallLane, answers: AnswerLength, latency: LatencyEstimate?
    ) throws(OffpeakError) -> LaneTally {
        let batchLane = lane == .batch
        var tally = LaneTally(provider: provider.kind, price: prices.cost(of: model, at: now), lane: lane)
        var batchedSizes: [Int] = []  // items in each batched call, for the audit
        var single: (request: CompletionRequest, output: Int)?
        let limit = CallPlanning.roundLimit(
            live: JobRunner.Options().roundRequests, batchLane: batchLane,
            inFlight: config.limits(for: provider.kind).inFlight(
                for: provider.kind, baseURL: provider.baseURL),
            batching: spec.batching)
        for round in rounds {
            let ordered = round.sorted { $0.record.position < $1.record.position }
            for start in stride(from: 0, to: ordered.count, by: limit) {
                let due = ordered[start..<min(ordered.count, start + limit)].filter {
                    $0.cached == nil && !$0.refused
                }
                guard let first = due.first else { continue }
                let maxTokens = Dictionary(
                    due.map { ($0.record.id, $0.request.maxTokens) }, uniquingKeysWith: { first, _ in first })
                let calls = try planner(model: first.request.model, batchLane: batchLane).plan(
                    due.map { ($0.record, $0.request) })
                for call in calls {
                    let output = answers.tokens(
                        of: call, itemMaxTokens: call.requests.map { maxTokens[$0.id] ?? spec.maxTokens })
                    tally.add(call.request, items: call.requests.count, output: output, latency: latency)
                    if single == nil, call.isBatched, let last = call.requests.last,
                        let alone = due.first(where: { $0.record.id == last.id })
                    {
                        single = (alone.request, answers.tokens(maxTokens: alone.request.maxTokens))
                    }
                }
                batchedSizes += calls.filter(\.isBatched).map(\.requests.count)
            }
        }
        if let single, spec.auditing.enabled, spec.batching.enabled {
            // One item asked alone, as the audit asks it (the prefix in the provider's cache), at
            // this lane's prices.
            var one = tally
            let before = one.dollars
            one.add(single.request, items: 0, output: single.output, latency: nil)
            let audit = AuditEstimate(
                batchedSizes: batchedSizes, runDollars: tally.dollars, single: one.dollars - before,
                spec: spec,
                record: try auditRecord(), now: now)
            for _ in 0..<audit.total {
                tally.add(single.request, items: 0, output: single.output, latency: latency)
            }
            tally.audits = audit
        }
        return tally
    }

    /// What the batch audit decided for the job and its model, when the job is audited (and the
    /// record is of its prompt shape and target).
    private func auditRecord() throws(OffpeakError) -> AuditRecord? {
        guard spec.auditing.enabled, spec.batching.enabled,
            let record = try store?.audits.auditRecord(
                job: spec.name, provider: provider.kind.rawValue, model: model),
            record.matches(shape: spec.auditShape, target: spec.auditTarget)
        else { return nil }
        return record
    }

    /// The run's planner for `model` in this lane, with the model's batch fitness as the store has
    /// it, and in the live lane the batch audit's limit (`AuditRecord`).
    private func planner(model: String, batchLane: Bool) throws(OffpeakError) -> BatchPlanner {
        let fitness = try store?.batches.batchFitness(provider: provider.kind.rawValue, model: model)
        let audit = batchLane ? nil : try auditRecord()
        return CallPlanning.batchPlanner(
            spec: spec, model: model, prices: prices, batchLane: batchLane, fitness: fitness,
            auditLimit: audit?.itemLimit(at: now),
            form: CallPlanning.answerForm(
                config.structuredOutput, provider: provider.kind, fitness: fitness, now: now),
            now: now)
    }

    /// The naive way: each item asked alone and whole, live, with no prompt cache.
    private func naiveTally(_ requests: [CompletionRequest], answers: AnswerLength) -> LaneTally {
        var tally = LaneTally(provider: provider.kind, price: prices.cost(of: model, at: now), lane: .live)
        tally.promptCache = false
        for request in requests {
            tally.add(request, items: 1, output: answers.tokens(maxTokens: request.maxTokens), latency: nil)
        }
        return tally
    }
}
