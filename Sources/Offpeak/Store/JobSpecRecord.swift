import Foundation

/// The spec one host last ran or ticked a job with (`JobSpecStore`): a row of `job_specs`.
struct JobSpecRecord: Sendable, Equatable {
    var job: String
    /// The host's name (`HostName`).
    var host: String
    /// SHA-256 of `spec`, in hex: two hosts run the same spec when these are equal.
    var specHash: String
    /// The spec as the host read it, in canonical JSON without its file's path (`JobSpec.sharedText`),
    /// so another host can say which fields differ.
    var spec: String
    /// When the host last ran or ticked the job with this spec.
    var seenAt: Date
}
