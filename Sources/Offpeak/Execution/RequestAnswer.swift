import Foundation

/// What `offpeak result ID` reports: a request's answer, or its state and why it has none yet.
public struct RequestAnswer: Sendable, Encodable {
    var id: String
    var job: String
    var run: String
    var state: String
    public var answer: String?
    var error: String?

    /// Exit 0 with an answer, 69 once it failed, 75 while it is pending.
    public var status: ExitStatus {
        if answer != nil { return .ok }
        return state == RequestRecord.State.failed.rawValue ? .unavailable : .temporaryFailure
    }

    /// Why there is no answer, for stderr: `r3f… is pending: waiting for the next run of job inbox`.
    public var explanation: String? {
        guard answer == nil else { return nil }
        return "\(id) is \(state): " + (error ?? "waiting for the next run of job \(job)")
    }

    init(_ request: RequestRecord, _ result: ResultRecord?) {
        id = request.id
        job = request.job
        run = request.runId
        state = request.state.rawValue
        answer = result?.text
        error = request.error
    }

    /// The request `id` as it is now, or — with `wait` — once it is answered or failed, or the
    /// timeout has passed.
    /// - Throws: a data error (65) when there is no such request.
    public static func look(up id: String, in store: Store, wait: Bool, timeout: TimeInterval)
        throws(OffpeakError) -> RequestAnswer
    {
        let deadline = Date() + timeout
        while true {
            guard let (request, result) = try store.submissions.request(id: id) else {
                throw OffpeakError(.dataError, "no request with id \(id)")
            }
            let finished = result != nil || request.state == .failed
            if finished || !wait || Date() >= deadline { return RequestAnswer(request, result) }
            Thread.sleep(forTimeInterval: 0.25)
        }
    }
}
