import Foundation

/// An audit record as the store keeps it (`audit_records.record`): JSON with sorted keys, the same
/// text on every engine, as `BatchFitness` is kept.
extension AuditRecord {
    /// The record's stored text.
    func storedText() throws(OffpeakError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        do { return String(decoding: try encoder.encode(self), as: UTF8.self) } catch {
            throw OffpeakError(
                .software, "cannot encode the audit record of \(job) for \(provider) \(model)",
                cause: "\(error)")
        }
    }

    /// The record a stored text holds. One that does not decode (written by a later offpeak)
    /// counts as none: the next audited item starts it afresh.
    static func stored(_ text: String) -> AuditRecord? {
        try? JSONDecoder().decode(AuditRecord.self, from: Data(text.utf8))
    }
}
