import Foundation

/// What the audit may still spend in a run: at most a share of what the run's calls cost
/// (`JobSpec.Audit`: its `proving_share` for a probe of a batch size not yet shown to hold, its
/// `max_share` for a sample of one that holds), in dollars (in weighted tokens, input plus output
/// at the model's weight, for a model with no price). The audit's whole spend in the run counts
/// against either: a run that spent a quarter proving its size samples again only once that is
/// under 3 % of what the run costs, so a run long enough falls back to the smaller share.
struct AuditShare {
    /// Dollars and weighted tokens: the second decides where the first is unknown (zero).
    struct Cost {
        var dollars: Double
        var tokens: Double

        init(dollars: Double, tokens: Double) {
            self.dollars = dollars
            self.tokens = tokens
        }

        init(_ spend: Spend) {
            dollars = spend.dollars
            tokens = Double(spend.totalInputTokens + spend.outputTokens * 5)
        }

        static func + (a: Cost, b: Cost) -> Cost {
            Cost(dollars: a.dollars + b.dollars, tokens: a.tokens + b.tokens)
        }
        static func - (a: Cost, b: Cost) -> Cost {
            Cost(dollars: a.dollars - b.dollars, tokens: a.tokens - b.tokens)
        }
        static func * (a: Cost, b: Double) -> Cost { Cost(dollars: a.dollars * b, tokens: a.tokens * b) }

        /// Whether `self` is at most `share` of `whole`, in dollars when `whole` has any.
        func within(_ share: Double, of whole: Cost) -> Bool {
            whole.dollars > 0 ? dollars <= share * whole.dollars : tokens <= share * whole.tokens
        }
    }

    /// What the run's other calls cost so far, and what its audit calls did (every process's).
    var others: Cost
    var audited: Cost
    /// Of `audited`, what this process's probes cost (`AuditPass.proving`): left out of the room
    /// of samples counted `apart` (the audit's other processes' probes stay in, which leaves less
    /// room, never more).
    var proving = Cost(dollars: 0, tokens: 0)
    /// What this pass's audit calls to come should cost.
    var queued = Cost(dollars: 0, tokens: 0)
    /// The processes answering the run now, this one included: each may queue its part of the
    /// room the share leaves.
    var workers = 1
    /// What an answered audit call of the run has cost on average so far; nil before the first.
    /// An audit is counted at no less than this: the estimate of a single call (`AuditCosts`)
    /// guesses its answer's length and the prompt cache, and the audit's share is what was paid.
    var perAudit: Cost?

    /// What an item of the run costs: as measured by the items done so far, or `estimate` before.
    func perItem(done: Int, estimate: Cost) -> Cost {
        guard done > 0, others.dollars > 0 || others.tokens > 0 else { return estimate }
        return others * (1 / Double(done))
    }

    /// An audit call estimated at `cost`, as the share counts it: at no less than `perAudit`.
    func counted(_ cost: Cost) -> Cost {
        guard let perAudit else { return cost }
        return Cost(dollars: max(cost.dollars, perAudit.dollars), tokens: max(cost.tokens, perAudit.tokens))
    }

    /// Whether audit calls of `costs` (a sampled item's, or a probe's) stay within `share` of
    /// what the run should cost in all: its other calls so far and `runLeft` to come (the run's
    /// items not answered yet, batched as the calls planned now); counts them when they do.
    /// With `apart`, what proving cost is left out: the room is for samples alone.
    mutating func admits(_ costs: [Cost], runLeft: Cost, within share: Double, apart: Bool = false) -> Bool {
        let probe = costs.map(counted).reduce(Cost(dollars: 0, tokens: 0), +)
        let mine = (queued + probe) * Double(max(1, workers))
        let before = apart ? audited - proving : audited
        guard (before + mine).within(share, of: others + runLeft) else { return false }
        queued = queued + probe
        return true
    }
}

/// What asking one item of a batched call alone may cost, and what an item costs in the call.
struct AuditCosts {
    let call: PlannedCall
    let price: ModelPrice?
    /// Tokens of the shared prefix the provider's prompt cache holds (the batched calls wrote it):
    /// read at the cache's price by both ways.
    let cachedPrefix: Int

    /// An answer's tokens, as both ways are guessed to write it (its real length is not known yet).
    private var answerTokens: Int { min(64, call.request.maxTokens / max(1, call.requests.count)) }
    private var systemTokens: Int { TokenEstimator.tokens(call.request.system ?? "") }

    /// Item `index` asked alone: the shared prefix, its text, its answer (of `answerTokens`, when
    /// known: the batched answer's length).
    func single(_ index: Int, answerTokens known: Int? = nil) -> AuditShare.Cost {
        cost(
            input: systemTokens - cachedPrefix + TokenEstimator.tokens(call.itemTexts[index]),
            output: known ?? answerTokens, cached: cachedPrefix)
    }

    /// One item's part of a batched call like this one: its share of the prefix, its text and tags,
    /// its answer and key.
    var batchedItem: AuditShare.Cost {
        let size = max(1, call.requests.count)
        let texts = call.itemTexts.reduce(0) { $0 + TokenEstimator.tokens($1) } / size
        let input = (systemTokens - cachedPrefix) / size + texts + Int(BatchPlanner.itemInputOverhead)
        return cost(
            input: input, output: answerTokens + Int(BatchPlanner.itemOutputOverhead),
            cached: cachedPrefix / size)
    }

    private func cost(input: Int, output: Int, cached: Int) -> AuditShare.Cost {
        let usage = Usage(input: input, output: output, cacheRead: cached)
        return AuditShare.Cost(
            dollars: price?.dollars(for: usage, lane: .live) ?? 0,
            tokens: Double(input + cached) + Double(output) * (price?.outputWeight ?? 5))
    }
}
