import Foundation
import GRDB

extension SQLiteStore {
    func batchFitness(provider: String, model: String) throws(OffpeakError) -> BatchFitness? {
        try read { db in try Self.fitness(provider: provider, model: model, db) }
    }

    func batchFitnessRecords() throws(OffpeakError) -> [BatchFitness] {
        try read { db in
            try String.fetchAll(db, sql: "SELECT fitness FROM batch_fitness ORDER BY updated_at DESC")
                .compactMap(BatchFitness.stored)
        }
    }

    @discardableResult
    func updateBatchFitness(
        provider: String, model: String, at now: Date,
        _ change: @escaping @Sendable (inout BatchFitness) -> Void
    ) throws(OffpeakError) -> BatchFitness {
        try write { db in
            try Self.update(FitnessChange(provider: provider, model: model, at: now, change: change), db)
        }
    }

    /// Reads, changes and writes a fitness record in the transaction of `db`.
    static func update(_ change: FitnessChange, _ db: Database) throws -> BatchFitness {
        var fitness =
            try Self.fitness(provider: change.provider, model: change.model, db)
            ?? BatchFitness(provider: change.provider, model: change.model, at: change.at)
        change.change(&fitness)
        try db.execute(
            sql: """
                INSERT INTO batch_fitness (provider, model, fitness, updated_at) VALUES (?, ?, ?, ?)
                ON CONFLICT(provider, model) DO UPDATE SET
                    fitness = excluded.fitness, updated_at = excluded.updated_at
                """,
            arguments: [change.provider, change.model, try fitness.storedText(), change.at])
        return fitness
    }

    private static func fitness(provider: String, model: String, _ db: Database) throws -> BatchFitness? {
        try String.fetchOne(
            db, sql: "SELECT fitness FROM batch_fitness WHERE provider = ? AND model = ?",
            arguments: [provider, model]
        ).flatMap(BatchFitness.stored)
    }
}
