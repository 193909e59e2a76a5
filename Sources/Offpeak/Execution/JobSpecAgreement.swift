import Foundation

/// Whether the hosts sharing a store run a job with the same spec (issue 23, item 7).
///
/// Each host records, per job, the spec it was last asked to run or tick it with (`JobSpecStore`),
/// whether or not it then runs it. A host about to run a job whose spec differs from the one
/// another host recorded within `recent` does not run it: two specs would otherwise be mixed in
/// one run (the run merges whatever items and prompts the host resuming it has). Both hosts refuse,
/// each naming the other, until every host that ran or ticked the job lately has the same spec: an
/// edit deployed host by host resolves once the last host has it and has ticked or run the job once
/// (until then the job waits on every host, and its due schedule fires once it is resolved); a host
/// that stopped running the job stops counting after `recent`. Jobs without a spec file
/// (`offpeak summarize`) are one host's one-off work and are not compared.
struct JobSpecAgreement {
    /// How lately another host must have run or ticked a job for its spec to count.
    static let recent: TimeInterval = 3600
    /// How old this host's own record may grow before a tick writes it again though nothing changed:
    /// well inside `recent`, so a host ticking every few minutes always counts, and writes its
    /// records once in a while rather than at every tick.
    static let refresh: TimeInterval = 900

    /// A job whose spec here differs from other hosts'.
    struct Disagreement: Sendable, Equatable {
        var job: String
        /// This host, then the others whose spec differs from its own, by name.
        var hosts: [String]
        /// The fields that differ from one of theirs, as a spec file names them.
        var fields: [String]

        var message: String {
            let names =
                hosts.count > 1
                ? hosts.dropLast().joined(separator: ", ") + " and " + (hosts.last ?? "") : hosts.joined()
            return "job \(job): its spec differs between hosts \(names) (fields: "
                + "\(fields.joined(separator: ", "))); it runs once every host that ran or ticked it in "
                + "the last hour has the same spec"
        }

        var error: OffpeakError { OffpeakError(.configuration, message) }
    }

    let store: Store
    /// This host's name (`HostName`).
    let host: String

    /// Records this host's spec of each job that has a spec file (written only when it changed or
    /// its record grew older than `refresh`), and compares each with the other hosts' recent ones.
    ///
    /// The others' specs are read again after a write: two hosts recording different specs at the
    /// same moment then see at least one of them the other's, so they never both run.
    /// - Returns: the jobs whose spec differs from another host's, by name.
    func check(_ specs: [JobSpec], now: Date) throws(OffpeakError) -> [String: Disagreement] {
        let shared = specs.filter { $0.sourcePath != nil }.map { spec in
            let text = spec.sharedText
            return JobSpecRecord(
                job: spec.name, host: host, specHash: SHA256.hex(text), spec: text, seenAt: now)
        }
        guard !shared.isEmpty else { return [:] }
        var recorded = try store.jobSpecs.jobSpecs(seenSince: now - Self.recent)
        let mine = Dictionary(
            recorded.filter { $0.host == host }.map { ($0.job, $0) }, uniquingKeysWith: { first, _ in first })
        let stale = shared.filter { record in
            guard let last = mine[record.job] else { return true }
            return last.specHash != record.specHash || now.timeIntervalSince(last.seenAt) >= Self.refresh
        }
        if !stale.isEmpty {
            try store.jobSpecs.recordJobSpecs(stale)
            recorded = try store.jobSpecs.jobSpecs(seenSince: now - Self.recent)
        }
        let others = Dictionary(grouping: recorded.filter { $0.host != host }, by: \.job)
        var disagreements: [String: Disagreement] = [:]
        for record in shared {
            let differing = (others[record.job] ?? []).filter { $0.specHash != record.specHash }
            guard !differing.isEmpty else { continue }
            let fields = Set(differing.flatMap { JobSpec.differingFields(record.spec, $0.spec) })
            disagreements[record.job] = Disagreement(
                job: record.job, hosts: [host] + differing.map(\.host).sorted(), fields: fields.sorted())
        }
        return disagreements
    }

    /// For `offpeak run`: records this host's spec of the job and refuses it when another host's
    /// recent one differs.
    /// - Throws: `.configuration` naming the hosts and the fields.
    func require(_ spec: JobSpec, now: Date) throws(OffpeakError) {
        if let disagreement = try check([spec], now: now)[spec.name] { throw disagreement.error }
    }
}
