import Foundation

/// The pass's watch on its model's price windows, for a job that waits for cheaper prices
/// (`wait_for_cheaper_prices`): a call that would land after the pass's cheap hours end stops the
/// pass, and the run waits in the deferred queue for the next cheap hours (`PriceWait`); unless the
/// deadline leaves no time to wait, when the pass goes on at the dearer prices, and says so once.
struct PriceWatch {
    let price: ModelPrice
    /// When the run must be done, on the run's clock.
    let deadline: Date
    /// Calls that land before this go on without a new plan: the prices the pass started at, or
    /// cheaper, hold until then.
    private var holdsUntil: Date
    /// The deadline made the pass go on at dearer prices: it goes on to the end.
    private var goesOn = false
    /// The wait that brought the run to the prices it runs at now, on the run's clock: from when it
    /// began to wait to the start of this pass. Its calls are compared with the dearest prices the
    /// wait went through (those it waited not to pay), for what waiting saved
    /// (`LedgerEntry.waitingSaved`). Nil when it did not wait.
    var waited: DateInterval?

    /// nil when the model's prices do not change with the clock.
    init?(price: ModelPrice?, deadline: Date?, now: Date) {
        guard let price, price.windows != nil, let deadline else { return nil }
        self.price = price
        self.deadline = deadline
        let start = price.at(now).referenceDollars
        // A week ahead at most: prices no dearer than these all week hold for the pass.
        holdsUntil =
            price.changes(after: now, through: now + 8 * 86_400).first { $0.price.referenceDollars > start }?
            .at
            ?? .distantFuture
    }

    enum Check: Equatable {
        case go
        /// The pass stops; the run waits for cheaper prices.
        case stop(RunStop)
        /// The pass goes on at dearer prices, for the reason given (said once).
        case goesOn(String)
    }

    /// Whether a call sent at `now` that may take `lead` seconds goes, with about `work` seconds of
    /// the run's work left.
    mutating func check(now: Date, lead: TimeInterval, work: TimeInterval) -> Check {
        if goesOn || now + lead < holdsUntil { return .go }
        switch PriceWait.plan(price: price, now: now, work: work, lead: lead, deadline: deadline) {
        case .wait(let wait):
            return .stop(
                RunStop(
                    state: .waiting, reason: wait.sentence(now: now), status: .temporaryFailure,
                    deferred: [.cheaperPrices]))
        case .now(let note):
            goesOn = true
            let landing = price.dearest(from: now, to: now + lead).window ?? "dearer"
            return .goesOn("goes on at \(landing) prices" + (note.map { ": \($0)" } ?? ""))
        }
    }
}
