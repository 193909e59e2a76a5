import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The Prometheus metrics file `offpeak.yaml`'s `metrics: {textfile: PATH}` names, which `tick` and
/// `run` rewrite when they end, for node_exporter's textfile collector.
///
/// It is replaced whole (a temporary file beside it, fsynced, renamed over it), so node_exporter
/// never reads half of it; the temporary file's name does not end in `.prom`, so the collector
/// never picks it up. Its mode is 0644 whatever the umask: node_exporter runs as its own user
/// (`prometheus` on Debian) and must read it, and it holds only counts and dollars under fixed
/// labels, nothing of the store's prompts, answers or names, which stay owner-only.
///
/// Writing it is a report of the work, not part of it: a failure is returned as a warning, and
/// the command keeps its exit status.
struct MetricsFile {
    static let mode: mode_t = 0o644
    let context: WorkspaceContext

    /// The configured file, or nil when the workspace writes no metrics.
    var url: URL? { context.config.metricsTextfile.map(context.workspace.url(for:)) }

    /// Writes the metrics from the store as it is now. `tick`: the tick that is ending, recorded as
    /// the last one first; a `run` passes nil and reports the last tick recorded. `store`: the store
    /// the caller holds open, else it is opened for reading here.
    /// - Returns: a warning to print when the file could not be written, else nil. A workspace
    ///   with no store yet (a `run` refused before it touched anything) writes nothing.
    func write(tick: LastTick? = nil, store: Store? = nil) -> String? {
        guard let url, let path = context.config.metricsTextfile else { return nil }
        let workspace = context.workspace
        do throws(OffpeakError) {
            let reading: Store
            if let store {
                reading = store
            } else {
                guard let present = try context.openStoreIfPresent() else { return nil }
                reading = present
            }
            // A workspace on a PostgreSQL store has no SQLite file to have made its cache folder.
            do {
                try FileManager.default.createDirectory(
                    at: workspace.cacheDirectory, withIntermediateDirectories: true)
            } catch {
                throw OffpeakError(
                    .ioError, "cannot create \(workspace.cacheDirectory.path)", cause: "\(error)")
            }
            // One writer at a time: each reads the store and the last tick after the one before it
            // wrote, so the last file written is never older than one written before it.
            let lock = try FileLock.exclusive(
                at: workspace.cacheDirectory.appendingPathComponent("metrics.lock").path)
            defer { withExtendedLifetime(lock) {} }
            let lastTickURL = LastTick.url(in: workspace)
            try tick?.save(to: lastTickURL)
            let totals = try reading.ledger.workspaceTotals()
            let text = MetricsText(
                totals: totals, prices: context.prices, lastTick: tick ?? LastTick.load(from: lastTickURL)
            ).text
            AtomicFile.removeLeftovers(in: url.deletingLastPathComponent())
            try AtomicFile.write(
                Data(text.utf8), to: url,
                options: AtomicFile.Options(mode: Self.mode, durable: true, temporarySuffix: ".tmp"))
            return nil
        } catch {
            return "cannot write the metrics file \(path) (\(error.cause ?? error.message))"
        }
    }
}

extension WorkspaceContext {
    /// `run`: rewrites the metrics file, if `offpeak.yaml` names one, with the workspace's totals.
    /// - Returns: a warning when it could not be written (the run's work and exit status stand).
    public func writeMetrics() -> String? {
        MetricsFile(context: self).write()
    }
}
