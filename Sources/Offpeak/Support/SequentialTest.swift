import Foundation

/// Wald's sequential probability ratio test (Wald, 1945) on a stream of agreeing and disagreeing
/// answers: does the share that disagrees stay within a tolerance, or not?
///
/// A fixed number of samples is too many for a clear case and too few for an unclear one. Here
/// each outcome moves one number, the log of how much likelier the answers so far are under a
/// disagreement rate of `bad` than under one of `good` (`evidence`), and the test stops as soon
/// as that number crosses a bound: `failBound` (shown not to meet the target), or `proveBound`
/// (shown to meet it). A model that never disagrees is proven after
/// `agreementsToProve(from: 0)` answers; one that often does fails after two or three
/// disagreements; a model near the target takes longest, as it should.
///
/// For a target agreement `agree` (a tolerance of `e = 1 - agree` disagreeing), the test tells
/// `good = e / 2` from `bad = 3e` (at most halfway from `e` to 1), each way with 10 % risk: with
/// the default target of 95 %, 97.5 % agreement from 85 %, proven after 17 agreeing answers in a
/// row. Between the two it samples on, and may go either way. A `watched` test (of a model whose
/// answers already changed with the prompt's size) proves with 1 % risk instead: 33 agreeing
/// answers in a row. The statistic is kept from going below `proveBound` (a floor, as Page's CUSUM
/// keeps it): a size proven long ago then fails after as few disagreements as a new one, so a
/// model that changes is noticed.
struct SequentialTest: Sendable, Equatable {
    /// The disagreement rates the test tells apart.
    let good: Double
    let bad: Double
    /// The risk of failing a size whose disagreement is `good`, and of proving one whose
    /// disagreement is `bad`.
    let alpha: Double
    let beta: Double

    static let risk = 0.1
    static let watchedRisk = 0.01

    /// The test of a target agreement `agree`, more than 0 and less than 1; `watched`: proving
    /// with `watchedRisk`.
    init(agree: Double, watched: Bool = false) {
        let tolerance = min(max(1 - agree, 1e-4), 0.9)
        good = tolerance / 2
        bad = min(3 * tolerance, (1 + tolerance) / 2)
        alpha = Self.risk
        beta = watched ? Self.watchedRisk : Self.risk
    }

    /// How the evidence moves with an answer that agrees (down, toward proof) and one that does
    /// not (up, toward failure).
    var agreeStep: Double { log((1 - bad) / (1 - good)) }
    var disagreeStep: Double { log(bad / good) }
    /// Evidence at or above this fails the size; at or below `proveBound` proves it.
    var failBound: Double { log((1 - beta) / alpha) }
    var proveBound: Double { log(beta / (1 - alpha)) }

    /// What the test says of `evidence`.
    enum Verdict: String, Sendable, Equatable, Codable {
        case holds, fails, undecided
    }

    func verdict(_ evidence: Double) -> Verdict {
        if evidence >= failBound { return .fails }
        return evidence <= proveBound ? .holds : .undecided
    }

    /// `evidence` after one more answer, kept from going below the floor.
    func next(_ evidence: Double, agreed: Bool) -> Double {
        max(proveBound, evidence + (agreed ? agreeStep : disagreeStep))
    }

    /// How many agreeing answers in a row would prove what `evidence` has not yet: 0 when it is
    /// proven.
    func agreementsToProve(from evidence: Double) -> Int {
        guard evidence > proveBound else { return 0 }
        return Int(((evidence - proveBound) / -agreeStep).rounded(.up))
    }
}
