import Foundation

/// A fitness record as the store keeps it (`batch_fitness.fitness`): JSON with sorted keys, the same
/// text on every engine.
extension BatchFitness {
    /// The record's stored text.
    func storedText() throws(OffpeakError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        do { return String(decoding: try encoder.encode(self), as: UTF8.self) } catch {
            throw OffpeakError(
                .software, "cannot encode the batch fitness of \(provider) \(model)", cause: "\(error)")
        }
    }

    /// The record a stored text holds. One that does not decode (written by a later offpeak)
    /// counts as none: it is advice, and the next answer writes it afresh.
    static func stored(_ text: String) -> BatchFitness? {
        try? JSONDecoder().decode(BatchFitness.self, from: Data(text.utf8))
    }
}
