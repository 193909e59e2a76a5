import Foundation

/// Adaptive batching (`BatchFitness`): how each batched answer fared is kept per provider and
/// model, and read back before items are packed together again and before each batched call
/// starts, so a model that cannot answer batched prompts stops costing calls within a round.
extension RunSession {
    /// `model`'s record; nil before its first batched answer, or when the store cannot say (it is
    /// advice: batching goes on as the job says). Read from the store at most once a second
    /// (`RecentReads`): what this pass learns is seen at once, what other processes learn within a
    /// second.
    func fitness(of model: String) -> BatchFitness? {
        let read = { () throws(OffpeakError) -> BatchFitness? in
            try context.store.batches.batchFitness(provider: context.provider.kind.rawValue, model: model)
        }
        return (try? plan.fitnessReads.value(for: model, now: Date(), read: read)) ?? nil
    }

    /// The structured-output form batched prompts ask for (`StructuredOutput`); nil: plain.
    func answerForm(fitness: BatchFitness?) -> StructuredForm? {
        CallPlanning.answerForm(
            context.structuredOutput, provider: context.provider.kind, fitness: fitness, now: Date())
    }

    /// Whether `call` was planned for a model that has since fared badly: it packs more items than
    /// the model should get now, or asks for its answer in a form no longer chosen. The call is not
    /// started; its items stay pending, and the next round plans them again.
    func outdated(_ call: PlannedCall) -> Bool {
        guard call.isBatched else { return false }
        let fitness = fitness(of: call.request.model)
        if let limit = fitness?.itemLimit(at: Date()), call.requests.count > limit { return true }
        if audits, let limit = auditRecord(of: call.request.model)?.itemLimit(at: Date()),
            call.requests.count > limit
        {
            return true
        }
        return call.request.structuredForm != answerForm(fitness: fitness)
    }

    /// Folds a batched answer into its model's record on its own (the batch lane books its answers
    /// apart from the record), and says at `--verbose` how it fared.
    func learn(from answer: BatchedAnswer, model: String) {
        let lesson = lesson(from: answer, model: model)
        do {
            learned(lesson, after: try context.store.batches.updateBatchFitness(lesson.change))
        } catch {
            context.logger.warning("could not record how \(model)'s batched answer fared: \(error)")
        }
    }

    /// What a batched answer teaches about its model, for the transaction that commits the answer
    /// (or `learn`); says at `--verbose` when the answer lost items.
    func lesson(from answer: BatchedAnswer, model: String) -> FitnessLesson {
        if answer.kept < answer.asked {
            context.logger.info(
                "batched answer \(answer.summary)\(answer.structured ? " (structured)" : ""); asking again")
        }
        let now = Date()
        let known = fitness(of: model)
        // A plain answer that lost items, where the structured form is still to be tried (Anthropic
        // under `auto`), turns the form on rather than shrinking the prompts.
        let formCanHelp =
            !answer.structured && context.structuredOutput == .auto
            && known?.refusesStructured(at: now) != true
        let change = FitnessChange(provider: context.provider.kind.rawValue, model: model, at: now) {
            $0.record(
                asked: answer.asked, kept: answer.kept, rejected: answer.rejected,
                structured: answer.structured, formCanHelp: formCanHelp, at: now)
        }
        return FitnessLesson(change: change, limitBefore: known?.itemLimit(at: now))
    }

    /// Keeps the record a lesson left, and says at `--verbose` when it changed the model's prompts.
    func learned(_ lesson: FitnessLesson, after: BatchFitness) {
        let (model, now) = (lesson.change.model, lesson.change.at)
        plan.fitnessReads.keep(after, for: model, at: now)
        let limit = after.itemLimit(at: now)
        guard limit != lesson.limitBefore, let limit else { return }
        let until = after.pausedUntil.map { Timestamp.text($0) } ?? "later"
        let news =
            limit == 1
            ? "\(model) keeps too little of its batched answers: its items go alone until \(until)"
            : "\(model): batched prompts of at most \(limit) items from now on"
        context.logger.info("\(news)")
    }

    /// A structured call the server refused (`StructuredAnswer.isRefusal`): its form is remembered
    /// as refused for the model, and the call's items stay pending, to go again in the next form
    /// (`json_object` with the schema, after `json_schema`) or without one (no attempt counted).
    /// - Returns: whether the error was such a refusal.
    func refusedStructured(_ call: PlannedCall, error: any Error) -> Bool {
        guard let form = call.request.structuredForm, let error = error as? ProviderError,
            case .http(let status, let message, _) = error,
            StructuredAnswer.isRefusal(status: status, message: message)
        else { return false }
        let model = call.request.model
        let now = Date()
        let after = try? context.store.batches.updateBatchFitness(
            provider: context.provider.kind.rawValue, model: model, at: now
        ) { $0.refuseStructured("\(status): \(message)", form: form, at: now) }
        if let after {
            plan.fitnessReads.keep(after, for: model, at: now)
        } else {
            plan.fitnessReads.forget(model)
        }
        let next = after.flatMap { answerForm(fitness: $0) }
        let structured = context.provider.capabilities.structured
        let named = structured.wire == .responseFormat
        let news =
            "the server refused the structured-output form \(structured.name(form)) for "
            + "\(model) (\(status): \(message)); batched prompts to it go "
            + (next.map { named ? "as \($0.rawValue)" : "with it" } ?? "without it") + " from now on"
        context.logger.warning("\(news)")
        return true
    }
}

/// A batched answer's change to its model's record, and the item limit the model had before it.
struct FitnessLesson: Sendable {
    var change: FitnessChange
    var limitBefore: Int?
}
