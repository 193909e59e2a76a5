import Foundation
import PostgresNIO
import Synchronization

/// How each model's batched prompts fared, on PostgreSQL, as the SQLite engine keeps it
/// (`SQLiteStore+BatchFitness`): one row per provider and model, its record as stored text
/// (`BatchFitness.storedText`).
extension PostgresEngine {
    func batchFitness(provider: String, model: String) throws(OffpeakError) -> BatchFitness? {
        try fitness(provider: provider, model: model)
    }

    func batchFitnessRecords() throws(OffpeakError) -> [BatchFitness] {
        var records: [BatchFitness] = []
        for row in try store.query("SELECT fitness FROM batch_fitness ORDER BY updated_at DESC") {
            if let record = BatchFitness.stored(try store.decode(row, as: String.self)) {
                records.append(record)
            }
        }
        return records
    }

    /// Read, change and write under a transaction advisory lock on the provider and model: two
    /// processes answering at once take turns, even for a record not written yet (no row to lock).
    @discardableResult
    func updateBatchFitness(
        provider: String, model: String, at now: Date,
        _ change: @escaping @Sendable (inout BatchFitness) -> Void
    ) throws(OffpeakError) -> BatchFitness {
        try store.transaction { () throws(OffpeakError) -> BatchFitness in
            try update(FitnessChange(provider: provider, model: model, at: now, change: change))
        }
    }

    /// Reads, changes and writes a fitness record in the transaction open on the connection: the
    /// lock and the write travel with the read, one round trip.
    func update(_ change: FitnessChange) throws(OffpeakError) -> BatchFitness {
        let (provider, model) = (change.provider, change.model)
        try lockFitness(provider: provider, model: model)
        var fitness =
            try fitness(provider: provider, model: model)
            ?? BatchFitness(provider: provider, model: model, at: change.at)
        change.change(&fitness)
        let text = try fitness.storedText()
        try store.send(
            """
            INSERT INTO batch_fitness (provider, model, fitness, updated_at)
            VALUES (\(provider), \(model), \(text), \(change.at))
            ON CONFLICT (provider, model) DO UPDATE SET
                fitness = excluded.fitness, updated_at = excluded.updated_at
            """)
        fitnessTexts.keep(text, provider: provider, model: model)
        return fitness
    }

    /// A fitness change in a transaction sent whole (`startCommit`), where no read can wait: made on
    /// the record this process last read or wrote, and written only if the store still holds that
    /// record (the row's lock and the advisory lock make the comparison and the write one step). A
    /// record another process changed meanwhile is left alone, and `outcome(of:)` makes the change
    /// again on it. With no record seen yet, the change reads it (`update`), as before.
    func sendUpdate(_ change: FitnessChange) throws(OffpeakError) -> FitnessUpdate {
        let (provider, model) = (change.provider, change.model)
        guard let seen = fitnessTexts.text(provider: provider, model: model),
            var fitness = BatchFitness.stored(seen)
        else { return .done(try update(change), change) }
        change.change(&fitness)
        let text = try fitness.storedText()
        try lockFitness(provider: provider, model: model)
        let written = try store.sendReading(
            """
            UPDATE batch_fitness SET fitness = \(text), updated_at = \(change.at)
            WHERE provider = \(provider) AND model = \(model) AND fitness = \(seen)
            RETURNING 1
            """)
        return .sent(written, fitness, text: text, change)
    }

    /// The record a fitness change left, once its transaction is done: made again on the stored
    /// record, in a transaction of its own, when the one it was made on had changed.
    func outcome(of update: FitnessUpdate) throws(OffpeakError) -> BatchFitness {
        switch update {
        case .done(let fitness, _):
            return fitness
        case .sent(let written, let fitness, let text, let change):
            guard try written.get().isEmpty else {
                fitnessTexts.keep(text, provider: change.provider, model: change.model)
                return fitness
            }
            return try updateBatchFitness(
                provider: change.provider, model: change.model, at: change.at, change.change)
        }
    }

    /// A fitness change as `startCommit` sent it.
    enum FitnessUpdate: Sendable {
        /// Read, changed and written (`update`).
        case done(BatchFitness, FitnessChange)
        /// Written if the record was still the one seen: the record and its text as written.
        case sent(PostgresStore.SentRows, BatchFitness, text: String, FitnessChange)

        /// The change it makes.
        var change: FitnessChange {
            switch self {
            case .done(_, let change), .sent(_, _, _, let change): change
            }
        }
    }

    /// Takes the provider and model's transaction advisory lock: two processes changing one record
    /// take turns, even for a record not written yet (no row to lock).
    private func lockFitness(provider: String, model: String) throws(OffpeakError) {
        try store.send(
            """
            SELECT pg_advisory_xact_lock(hashtextextended(\("offpeak batch fitness \(provider)\n\(model)"), 0))
            """)
    }

    private func fitness(provider: String, model: String) throws(OffpeakError) -> BatchFitness? {
        guard
            let row = try store.query(
                "SELECT fitness FROM batch_fitness WHERE provider = \(provider) AND model = \(model)"
            ).first
        else { return nil }
        let text = try store.decode(row, as: String.self)
        fitnessTexts.keep(text, provider: provider, model: model)
        return BatchFitness.stored(text)
    }
}

/// The batch fitness records a `PostgresEngine` last read or wrote, as stored text, by provider and
/// model: what a commit sent whole changes without reading (`sendUpdate`).
final class SeenFitness: Sendable {
    private let texts = Mutex<[String: String]>([:])

    func text(provider: String, model: String) -> String? {
        texts.withLock { $0["\(provider)\n\(model)"] }
    }

    func keep(_ text: String, provider: String, model: String) {
        texts.withLock { $0["\(provider)\n\(model)"] = text }
    }
}
