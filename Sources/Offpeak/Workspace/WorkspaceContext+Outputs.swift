import Foundation

extension WorkspaceContext {
    /// `offpeak outputs JOB [--run RUN]`: writes the outputs of the job's newest finished run (or of
    /// `run`) again from the store, into the folder this workspace's spec of the job names, or, for
    /// a job with no spec file here (`offpeak summarize`), the one its run was made with. The store
    /// is only read.
    /// - Throws: `.usage` for an empty name; `.dataError` when there is no such finished run, or this
    ///   workspace's spec of the job cannot be read (naming the file); the store's and the folder's
    ///   faults.
    public func rewriteOutputs(job: String, run: String?) throws(OffpeakError) -> OutputsRewritten {
        guard !job.isEmpty else { throw OffpeakError(.usage, "JOB: expected a job's name, got ''") }
        if let run, run.isEmpty { throw OffpeakError(.usage, "--run: expected a run's id, got ''") }
        var folder: String?
        let catalog = try JobCatalog.load(workspace: workspace.root)
        if let entry = catalog.entries.last(where: { $0.name == job }) {
            folder = try entry.spec.get().output
        }
        return try OutputRewrite.rewrite(
            store: try openStoreForReading(), workspace: workspace, job: job, runID: run, folder: folder)
    }
}
