/// Failures that are alike, call after call: the run's configuration or its provider is at fault,
/// not its items.
///
/// A server that does not know the model ("Invalid model name") or refuses the key answers every
/// call the same way, whatever items it carries. Retried item by item, that looks like a queue of
/// bad items ("retrying at ... (attempt 2 of 5)") tick after tick, and items that are fine fail for
/// good once their attempts run out. The streak lives in the run's row, so it carries across ticks
/// that each make only one call.
struct FailureStreak: Equatable {
    /// Calls in a row that failed with `text`.
    var calls = 0
    var text: String?
    /// Distinct requests those calls carried, oldest first, at most `remembered`.
    var items: [String] = []

    /// Enough distinct items to tell "every call" from "one bad item".
    static let remembered = 3

    /// What a streak says about the run.
    enum Verdict: Equatable {
        /// The same refusal for different items: the model name, the key or the base URL (78).
        case configuration
        /// The same server error call after call: the provider is failing (69).
        case providerFailing
    }

    init(calls: Int = 0, text: String? = nil, items: [String] = []) {
        self.calls = calls
        self.text = text
        self.items = items
    }

    /// The streak stored in `run`.
    init(run: RunRecord) {
        calls = run.failureStreak
        text = run.failureText
        items = run.failureItems.map { $0.split(separator: " ").map(String.init) } ?? []
    }

    /// Writes the streak into `run`, to be committed with the call it follows.
    func store(in run: inout RunRecord) {
        run.failureStreak = calls
        run.failureText = text
        run.failureItems = items.isEmpty ? nil : items.joined(separator: " ")
    }

    /// A call failed with `text`, carrying `requests`.
    mutating func failed(_ text: String, requests: [String]) {
        if text != self.text {
            self = FailureStreak(text: text)
        }
        calls += 1
        for id in requests where items.count < Self.remembered && !items.contains(id) {
            items.append(id)
        }
    }

    /// A call was answered: whatever failed before was not every call.
    mutating func answered() {
        self = FailureStreak()
    }

    /// What the streak says now that `error` ended it.
    /// - Parameter unanswered: items of the run not answered yet; a run of two items cannot show
    ///   three different ones.
    func verdict(for error: ProviderError, unanswered: Int) -> Verdict? {
        guard case .http(let status, _, _) = error, text == error.description else { return nil }
        if (500...599).contains(status) { return calls >= 3 ? .providerFailing : nil }
        guard (400...499).contains(status), status != 429, calls >= 2, items.count >= 2 else { return nil }
        return items.count >= min(Self.remembered, unanswered) ? .configuration : nil
    }
}
