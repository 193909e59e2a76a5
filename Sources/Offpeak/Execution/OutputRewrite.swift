import Foundation

/// `offpeak outputs JOB [--run RUN]`: a finished run's `output:` folder written again from the
/// store, on any host (issue 23, item 5).
///
/// Outputs are derived from the store (`OutputWriter`): the run's requests outlined and its answers
/// give the same files and the same `index.json`, byte for byte, as the host that finished the run
/// wrote, wherever the store is read from. Files of the folder that are not the run's are left as
/// they are.
enum OutputRewrite {
    /// Writes the outputs of `runID`, or of the job's newest finished run, into `folder` (relative
    /// to the workspace), or, when that is nil, into the folder the run's spec names.
    /// - Throws: `.dataError` when there is no such run, it is another job's, it has not finished,
    ///   or nothing says where its outputs go; the store's and the folder's faults.
    static func rewrite(
        store: Store, workspace: Workspace, job: String, runID: String?, folder: String?
    ) throws(OffpeakError) -> OutputsRewritten {
        let run = try finishedRun(store: store, job: job, runID: runID)
        if let pruned = try store.runs.prunedAt(runID: run.id) {
            throw OffpeakError(
                .dataError,
                "run \(run.id)'s requests and results were pruned at \(Timestamp.text(pruned)) (retention: in "
                    + "offpeak.yaml); the outputs it wrote when it finished are all there is")
        }
        let output = try outputFolder(folder ?? run.storedSpec()?.output, run: run)
        let items = try store.runs.outlines(runID: run.id)
        let written = try OutputWriter(directory: workspace.url(for: output)).write(
            job: run.job, runID: run.id, items: items, notes: try ItemNotes.of(run, store: store),
            earlier: try OutputWriter.earlier(run, items: items, store: store)
        ) { visit throws(OffpeakError) in
            try store.runs.forEachResult(runID: run.id) { try visit($0) }
        }
        return OutputsRewritten(
            job: run.job, run: run.id, output: output, files: written.files, rewritten: written.rewritten)
    }

    /// The run named, or the job's newest finished one.
    private static func finishedRun(store: Store, job: String, runID: String?) throws(OffpeakError)
        -> RunRecord
    {
        guard let runID else {
            guard let run = try store.runs.latestFinishedRun(job: job) else {
                throw OffpeakError(
                    .dataError, "job \(job) has no finished run in the store; `offpeak status` lists its runs"
                )
            }
            return run
        }
        guard let run = try store.runs.run(id: runID) else {
            throw OffpeakError(.dataError, "run \(runID): no such run in the store")
        }
        guard run.job == job else {
            throw OffpeakError(.dataError, "run \(runID) is a run of job \(run.job), not of \(job)")
        }
        guard !run.state.isResumable else {
            throw OffpeakError(
                .dataError,
                "run \(runID) is \(run.state.rawValue), not finished: its outputs are written as it runs")
        }
        return run
    }

    /// The folder, checked as a spec's `output` is, so a store shared with other hosts cannot send
    /// the files outside this workspace.
    private static func outputFolder(_ folder: String?, run: RunRecord) throws(OffpeakError) -> String {
        guard let folder else {
            throw OffpeakError(
                .dataError,
                "run \(run.id) keeps no spec to say where its outputs go, and this workspace has no "
                    + "spec of job \(run.job)")
        }
        do { return try OutputFolder.checked(folder) } catch {
            throw OffpeakError(.dataError, "run \(run.id): output: \(error.description)")
        }
    }
}

/// What `offpeak outputs` wrote.
public struct OutputsRewritten: Sendable, Equatable, Encodable {
    public var job: String
    public var run: String
    /// The folder, relative to the workspace.
    public var output: String
    /// The run's answered items, one file each.
    public var files: Int
    /// Of those, the files that were missing or different and were written again.
    public var rewritten: Int

    public var text: String {
        "job \(job): outputs of run \(run) written to \(output)/ (\(Plural.count(files, "item file")), "
            + "\(rewritten) of them rewritten, and index.json)\n"
    }
}
