import Foundation
import Synchronization

/// Every provider batch and batch file the sim holds, and the per-`custom_id` faults tests
/// target, behind one lock so a retrieve never sees a batch half ended.
final class BatchBook: Sendable {
    private struct Contents {
        var jobs: [String: BatchJob] = [:]
        /// Ids in creation order; lists run newest first.
        var order: [String] = []
        var files: [String: BatchFile] = [:]
        var targeted: [String: BatchFaultKind] = [:]
    }

    private let contents = Mutex(Contents())
    /// The status every results download answers (`--results-status`, `POST /sim/results-status`);
    /// nil: they are served. A setting, so `/sim/reset` keeps it.
    private let downloadRefusal: Mutex<Int?>

    init(downloadRefusal: Int? = nil) {
        self.downloadRefusal = Mutex(downloadRefusal)
    }

    var refusedDownloadStatus: Int? { downloadRefusal.withLock { $0 } }

    func refuseDownloads(_ status: Int?) {
        downloadRefusal.withLock { $0 = status }
    }

    func add(_ job: BatchJob) {
        contents.withLock {
            $0.jobs[job.id] = job
            $0.order.append(job.id)
        }
    }

    func job(_ id: String) -> BatchJob? {
        contents.withLock { $0.jobs[id] }
    }

    /// Changes a job in place; nil if there is no such job.
    @discardableResult
    func update<T>(_ id: String, _ change: (inout BatchJob) -> T) -> T? {
        contents.withLock { contents in
            guard var job = contents.jobs[id] else { return nil }
            let result = change(&job)
            contents.jobs[id] = job
            return result
        }
    }

    /// Asks a job to cancel, as every API's cancel call does: one still in progress moves to
    /// `canceling` (its requests not yet done end canceled); one that ended stays as it is.
    /// - Returns: the job after the change; nil if there is no such job.
    @discardableResult
    func cancel(_ id: String) -> BatchJob? {
        update(id) { job in
            if job.phase == .inProgress {
                job.phase = .canceling
                job.cancelInitiatedAt = Date()
            }
            return job
        }
    }

    /// A page of `api`'s job ids, newest first: after `afterID` (older) or before `beforeID`
    /// (newer), at most `limit`; and whether more are left beyond the page.
    func page(api: BatchAPI, limit: Int, afterID: String?, beforeID: String?) -> (
        ids: [String], hasMore: Bool
    ) {
        contents.withLock { contents in
            var ids = contents.order.reversed().filter { contents.jobs[$0]?.api == api }
            if let afterID, let index = ids.firstIndex(of: afterID) {
                ids = Array(ids[(index + 1)...])
            } else if let beforeID, let index = ids.firstIndex(of: beforeID) {
                ids = Array(ids[..<index].suffix(limit))
                return (ids, index > ids.count)
            }
            return (Array(ids.prefix(limit)), ids.count > limit)
        }
    }

    func addFile(_ file: BatchFile) {
        contents.withLock { $0.files[file.id] = file }
    }

    func file(_ id: String) -> BatchFile? {
        contents.withLock { $0.files[id] }
    }

    /// `POST /sim/batch-faults`: these `custom_id`s end with `kind` in every later batch.
    func target(_ ids: [String], _ kind: BatchFaultKind) {
        contents.withLock { contents in
            for id in ids { contents.targeted[id] = kind }
        }
    }

    func targetedFaults() -> [String: BatchFaultKind] {
        contents.withLock { $0.targeted }
    }

    func reset() {
        contents.withLock { $0 = Contents() }
    }
}

/// A file uploaded for (or written by) an OpenAI batch.
struct BatchFile: Sendable {
    var id: String
    var filename: String
    var purpose: String
    var createdAt: Date
    var data: Data
}

/// How a batch fault ends a request instead of an answer.
enum BatchFaultKind: String, Sendable, Codable, CaseIterable {
    case errored
    case expired
    case canceled
}
