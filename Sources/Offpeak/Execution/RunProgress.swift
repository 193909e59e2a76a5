/// How far a run has got, for a progress line.
public struct RunProgress: Sendable, Equatable {
    public var job: String
    public var done: Int
    public var failed: Int
    public var total: Int
    public var dollars: Double
}

/// What a run came to: its record, what to tell the user, and the exit status for it.
public struct RunOutcome: Sendable {
    public var run: RunRecord
    public var status: ExitStatus
    public var message: String
    public var spend: Spend
    public var outputDirectory: String
    /// Items answered by this invocation (not by an earlier, interrupted one).
    public var answeredNow: Int
    /// Provider calls this invocation sent.
    var callsMade = 0
    /// Why the run waits, when its conditions held it back (before it started or part-way).
    public var deferred: [ConditionGate.Reason] = []
}
