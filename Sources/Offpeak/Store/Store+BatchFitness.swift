import Foundation
import GRDB

extension SQLiteStore {
    func batchFitness(provider: String, model: String) throws(OffpeakError) -> BatchFitness? {
        try read { db in try Self.fitness(provider: provider, model: model, db) }
    }

    func batchFitnessRecords() throws(OffpeakError) -> [BatchFitness] {
        try read { db in
            try String.fetchAll(db, sql: "SELECT fitness FROM batch_fitness ORDER BY updated_at DESC")
                .compactMap(Self.decode)
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
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let text = String(decoding: try encoder.encode(fitness), as: UTF8.self)
            try db.execute(
                sql: """
                    INSERT INTO batch_fitness (provider, model, fitness, updated_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT(provider, model) DO UPDATE SET
                        fitness = excluded.fitness, updated_at = excluded.updated_at
                    """,
                arguments: [provider, model, text, now])
            return fitness
        }
    }

    private static func fitness(provider: String, model: String, _ db: Database) throws -> BatchFitness? {
        try String.fetchOne(
            db, sql: "SELECT fitness FROM batch_fitness WHERE provider = ? AND model = ?",
            arguments: [provider, model]
        ).flatMap(decode)
    }

    /// A record that does not decode (written by a later offpeak) counts as none: it is advice,
    /// and the next answer writes it afresh.
    private static func decode(_ text: String) -> BatchFitness? {
        try? JSONDecoder().decode(BatchFitness.self, from: Data(text.utf8))
    }
}
