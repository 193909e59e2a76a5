import Foundation

/// What the run's plan stage (DESIGN.md's data flow: requests, cache, then the planner) plans from
/// besides the store: whether the run may be planned at all, and what the pass learned lately of
/// how its models answer batched prompts. The planning itself is `RunSession.nextCalls`.
struct PlanStage {
    /// The user canceled the run (`offpeak cancel`): nothing is planned; the pass only collects
    /// its provider batches.
    let canceled: Bool
    /// Answers that came back changed how the round's model should be asked (`outdated`): the
    /// round's calls not started yet are planned again.
    var replanRound = false
    /// The batch fitness records this pass has read or written lately (`fitness(of:)`).
    let fitnessReads = RecentReads<BatchFitness>()
}

/// What a pass did and met, for its verdict (`RunVerdict.Facts`) and its outcome.
struct PassTally {
    /// Items (not steps) answered by this pass.
    var answeredNow = 0
    /// Calls this pass has started (a provider batch's requests count one each).
    var callsMade = 0
    /// Items this pass put in provider batches.
    var submittedNow = 0
    /// Conditions that did not hold when `run --force` started the run.
    var forcedPast: [ConditionGate.Reason] = []
    /// What the user should read before the outcome (a changed spec's dropped items).
    var notices: [String] = []
    /// Items the fallback chain's routes answered, past its first.
    var fellBack = FallbackChain.Answered()
}
