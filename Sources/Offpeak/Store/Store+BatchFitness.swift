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
        provider: String, model: String, at now: Date, _ change: @escaping (inout BatchFitness) -> Void
    ) throws(OffpeakError) -> BatchFitness {
        try write { db in
            var fitness =
                try Self.fitness(provider: provider, model: model, db)
                ?? BatchFitness(provider: provider, model: model, at: now)
            change(&fitness)
            try db.execute(
                sql: """
                    INSERT INTO batch_fitness (provider, model, fitness, updated_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT(provider, model) DO UPDATE SET
                        fitness = excluded.fitness, updated_at = excluded.updated_at
                    """,
                arguments: [provider, model, try fitness.storedText(), now])
            return fitness
        }
    }

    private static func fitness(provider: String, model: String, _ db: Database) throws -> BatchFitness? {
        try String.fetchOne(
            db, sql: "SELECT fitness FROM batch_fitness WHERE provider = ? AND model = ?",
            arguments: [provider, model]
        ).flatMap(BatchFitness.stored)
    }
}
