import Foundation

/// How a model's batched prompts fared (`batch_fitness`, one row per provider and model): what
/// adaptive batching reads before it packs items into one prompt.
///
/// A small model may write prose around its JSON, invent keys or stop half way, prompt after
/// prompt. Halving the rejected items' batches down to one each finds that out at the price of
/// every level's calls, on every run. Kept here, the lesson lasts: a model whose batched answers
/// keep less than half their items gets smaller prompts; one whose prompts keep nothing twice in a
/// row gets none for a while (the rest of the work goes alone), then one small probe, and batching
/// grows back as probes succeed.
struct BatchFitness: Sendable, Equatable, Codable {
    var provider: String
    var model: String
    var prompts = 0
    var itemsAsked = 0
    var itemsKept = 0
    /// Items rejected, by why (`AnswerSplitter.Rejection`'s words).
    var rejections: [String: Int] = [:]
    /// Most items a batched prompt may carry now; nil: what the job allows.
    var cap: Int?
    /// Batched prompts that kept nothing, in a row.
    var emptyInARow = 0
    /// No batching for this model before then.
    var pausedUntil: Date?
    /// Pauses since the last probe that succeeded: each pause is twice the one before.
    var pauses = 0
    /// When a batched prompt without the structured-output form last lost items: under
    /// `structured_output: auto`, Anthropic models then get the forced shape too.
    var plainLossAt: Date?
    /// The server refused the structured-output form asked first (`json_schema`, or Anthropic's
    /// forced tool): its words, redacted, and when.
    var structuredRefusal: String?
    var structuredRefusedAt: Date?
    /// The server refused the second form too (`json_object` with a schema), and when. Optional, as
    /// every field added later: a record stored before it existed decodes as "not refused".
    var jsonObjectRefusal: String?
    var jsonObjectRefusedAt: Date?
    var updatedAt: Date

    init(provider: String, model: String, at now: Date) {
        self.provider = provider
        self.model = model
        self.updatedAt = now
    }

    /// The first pause; each later one doubles, up to `longestPause`.
    static let firstPause: TimeInterval = 3600
    static let longestPause: TimeInterval = 24 * 3600
    /// How long a lost plain answer, or a refusal of the structured form, is remembered.
    static let memory: TimeInterval = 7 * 24 * 3600

    /// The most items one prompt for this model may carry at `now`; nil: what the job allows. A
    /// pause over, the next prompt is a probe of two.
    func itemLimit(at now: Date) -> Int? {
        if let until = pausedUntil { return now < until ? 1 : 2 }
        return cap
    }

    /// Whether the server refused the structured form asked first (`json_schema`) lately.
    func refusesStructured(at now: Date) -> Bool {
        refuses(.jsonSchema, at: now)
    }

    /// Whether the server refused `form` lately.
    func refuses(_ form: StructuredForm, at now: Date) -> Bool {
        let at = form == .jsonSchema ? structuredRefusedAt : jsonObjectRefusedAt
        guard let at else { return false }
        return now.timeIntervalSince(at) < Self.memory
    }

    /// Whether a plain batched answer lost items lately.
    func lostPlainAnswers(at now: Date) -> Bool {
        guard let at = plainLossAt else { return false }
        return now.timeIntervalSince(at) < Self.memory
    }

    /// Folds in one batched answer: `asked` items, `kept` of them accepted, the rest by why.
    /// - Parameter formCanHelp: a plain answer that lost items will be followed by structured ones
    ///   (`structured_output: auto`): its losses turn the form on and do not shrink the prompts.
    mutating func record(
        asked: Int, kept: Int, rejected: [String: Int], structured: Bool, formCanHelp: Bool = false,
        at now: Date
    ) {
        guard asked > 0 else { return }
        prompts += 1
        itemsAsked += asked
        itemsKept += kept
        rejections.merge(rejected, uniquingKeysWith: +)
        updatedAt = now
        if !structured, kept < asked {
            plainLossAt = now
            if formCanHelp { return }
        }
        // Prompts sent before a pause began come back during it: already accounted for.
        if let until = pausedUntil, now < until { return }
        emptyInARow = kept == 0 ? emptyInARow + 1 : 0
        let share = Double(kept) / Double(asked)
        if emptyInARow >= 2 || (kept == 0 && pausedUntil != nil) {  // two in a row, or a failed probe
            pause(at: now)
        } else if share < 0.5 {
            cap = max(1, asked / 2)
            if cap == 1 { pause(at: now) }
        } else if share >= 0.9 {
            if let until = pausedUntil {
                if now >= until {  // a probe that worked: batching comes back, small
                    pausedUntil = nil
                    pauses = 0
                    cap = 2 * asked
                }
            } else if let current = cap {
                cap = current * 2
            }
        }
    }

    /// Remembers that the server refused `form`, in its (redacted) words; nil: every form.
    mutating func refuseStructured(_ why: String, form: StructuredForm? = nil, at now: Date) {
        if form != .jsonObject {
            structuredRefusal = why
            structuredRefusedAt = now
        }
        if form != .jsonSchema {
            jsonObjectRefusal = why
            jsonObjectRefusedAt = now
        }
        updatedAt = now
    }

    private mutating func pause(at now: Date) {
        pauses += 1
        let length = min(Self.longestPause, Self.firstPause * Double(1 << min(pauses - 1, 10)))
        pausedUntil = now.addingTimeInterval(length)
        cap = 1
        emptyInARow = 0
    }
}
