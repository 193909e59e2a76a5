import Foundation
import PostgresNIO

/// How each model's batched prompts fared, on PostgreSQL, as the SQLite engine keeps it
/// (`Store+BatchFitness`): one row per provider and model, its record as stored text
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
        try store.send(
            """
            SELECT pg_advisory_xact_lock(hashtextextended(\("offpeak batch fitness \(provider)\n\(model)"), 0))
            """)
        var fitness =
            try fitness(provider: provider, model: model)
            ?? BatchFitness(provider: provider, model: model, at: change.at)
        change.change(&fitness)
        try store.send(
            """
            INSERT INTO batch_fitness (provider, model, fitness, updated_at)
            VALUES (\(provider), \(model), \(try fitness.storedText()), \(change.at))
            ON CONFLICT (provider, model) DO UPDATE SET
                fitness = excluded.fitness, updated_at = excluded.updated_at
            """)
        return fitness
    }

    private func fitness(provider: String, model: String) throws(OffpeakError) -> BatchFitness? {
        try store.query(
            "SELECT fitness FROM batch_fitness WHERE provider = \(provider) AND model = \(model)"
        ).first.flatMap { row throws(OffpeakError) in
            BatchFitness.stored(try store.decode(row, as: String.self))
        }
    }
}
