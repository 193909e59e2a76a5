import Foundation
import Logging
import OffpeakTestSupport
import PostgresNIO
import Testing

@testable import Offpeak

/// What only the PostgreSQL engine can show of provider batches: several connections preparing,
/// collecting and learning from one batch at once, and the rows they leave.
@Suite(.ownThreads) struct PostgresBatchTests {
    typealias F = RoleFixtures

    /// `count` connections to one fresh database, run `r1` with `items` pending requests inserted.
    static func engines(_ count: Int, items: Int) throws -> ([PostgresEngine], [RequestRecord]) {
        let url = try PostgresCluster.shared.makeDatabase()
        let engines = try (0..<count).map { _ in try PostgresEngineTests.engine(url) }
        let requests = F.requests(items, run: "r1")
        try engines[0].insert(run: F.run("r1"), requests: requests)
        return (engines, requests)
    }

    @Test func connectionsCollectingOneBatchAtOnceBookEachResultOnceAndCollectItOnce() throws {
        let (engines, requests) = try Self.engines(4, items: 40)
        defer { for engine in engines { engine.store.close() } }
        let batch = try engines[0].prepareBatch(
            runID: "r1", provider: "anthropic", model: "m", requestIDs: requests.map(\.id), worstDollars: 1,
            now: F.t0)
        let bookings = requests.enumerated().map { index, request in
            (customID: "\(batch.id)_\(index)", booking: BatchStoreRoleTests.answered(request, dollars: 0.01))
        }
        let run = F.run("r1")
        let outcomes = try PostgresEngineTests.atOnce(engines) { _, engine in
            var booked = Set<String>()
            // Each collector books the results a few at a time, as the lane does.
            for start in stride(from: 0, to: bookings.count, by: 7) {
                booked.formUnion(
                    try engine.commitBatchCalls(
                        batchID: batch.id, Array(bookings[start..<min(bookings.count, start + 7)]), run: run,
                        lease: nil, now: F.t0 + 1))
            }
            return (booked, try engine.markCollected(batchID: batch.id, now: F.t0 + 2))
        }.map { try $0.get() }
        let booked = outcomes.map(\.0)
        #expect(booked.reduce(0) { $0 + $1.count } == requests.count)
        #expect(booked.reduce(Set<String>()) { $0.union($1) } == Set(bookings.map(\.customID)))
        #expect(outcomes.filter(\.1).count == 1)
        let ledger = try PostgresStoreTests.values(
            engines[0].store, "SELECT batch_api FROM ledger ORDER BY id", as: Bool.self)
        #expect(ledger.count == requests.count && ledger.allSatisfy { $0 })
        #expect(try engines[0].itemCounts(runID: "r1") == ItemCounts(requests: 40, total: 40, done: 40))
        #expect(try engines[0].run(id: "r1")?.itemsDone == 40)
        #expect(try engines[0].batch(id: batch.id)?.state == .collected)
    }

    @Test func connectionsBatchingOneRequestAtOnceLeaveItInOneBatch() throws {
        let (engines, requests) = try Self.engines(4, items: 3)
        defer { for engine in engines { engine.store.close() } }
        let prepared = PostgresEngineTests.atOnce(engines) { _, engine in
            try engine.prepareBatch(
                runID: "r1", provider: "openai", model: "m", requestIDs: requests.map(\.id), worstDollars: 1,
                now: F.t0)
        }
        #expect(prepared.filter { (try? $0.get()) != nil }.count == 1)
        #expect(try engines[0].batches(runID: "r1").count == 1)
        let items = try PostgresStoreTests.values(
            engines[0].store, "SELECT count(*) FROM batch_items", as: Int.self)
        #expect(items == [3])
    }

    @Test func connectionsLearningFromOneModelAtOnceLoseNoCount() throws {
        let (engines, _) = try Self.engines(4, items: 0)
        defer { for engine in engines { engine.store.close() } }
        let perThread = 10
        let results = PostgresEngineTests.atOnce(engines) { _, engine in
            for step in 0..<perThread {
                try engine.updateBatchFitness(provider: "sim", model: "m", at: F.t0 + Double(step)) {
                    $0.record(asked: 2, kept: 2, rejected: [:], structured: true, at: F.t0 + Double(step))
                }
            }
        }
        #expect(results.allSatisfy { (try? $0.get()) != nil })
        let fitness = try #require(try engines[0].batchFitness(provider: "sim", model: "m"))
        #expect(fitness.prompts == 4 * perThread && fitness.itemsAsked == 8 * perThread)
    }

    // SQLite only: a run left in the workspace's SQLite file, copied to PostgreSQL.
    @Test(.sqliteOnly) func batchesARealRunLeftInSQLiteReadTheSameOnPostgreSQLOnceCopied() throws {
        let workspace = try StoreCopyTests.populatedWorkspace()
        let url = try PostgresCluster.shared.makeDatabase()
        #expect(try StoreCopyTests.copy(workspace, to: url).status == 0)
        // The copy marked the SQLite store moved: it is read as a reporting command reads it.
        let sqlite = try Store.openForReading(
            Store.Opening(
                workspace: Workspace(root: workspace.root), location: .sqlite, environment: [:],
                logger: Logger(label: "test"))
        ).batches
        let engine = try PostgresEngineTests.engine(url)
        defer { engine.store.close() }
        let listed = try sqlite.batchListings(all: true)
        #expect(!listed.isEmpty && listed.contains { $0.batch.counts != nil })
        #expect(
            try engine.batchListings(all: true).map(Self.sameAtMilliseconds)
                == listed.map(Self.sameAtMilliseconds))
        for listing in listed {
            let id = listing.batch.id
            #expect(try engine.items(batchID: id) == (try sqlite.items(batchID: id)))
            let calls = { (store: any BatchStore) throws in
                try store.batchCalls(batchID: id).map { call in [call.customID] + call.requests.map(\.payload)
                }
            }
            #expect(try calls(engine) == (try calls(sqlite)))
        }
        #expect(try engine.batchFitnessRecords() == (try sqlite.batchFitnessRecords()))
        #expect(try !engine.batchFitnessRecords().isEmpty)
        #expect(try engine.knownRemoteIDs() == (try sqlite.knownRemoteIDs()))
        #expect(try engine.batchCount() == (try sqlite.batchCount()))
    }

    /// A listing with its batch's times to the millisecond (what SQLite keeps), so two engines'
    /// readings of one row compare equal.
    static func sameAtMilliseconds(_ listing: BatchListing) -> BatchListing {
        let round = { (date: Date) in
            Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded() / 1000)
        }
        var listing = listing
        listing.batch.preparedAt = round(listing.batch.preparedAt)
        listing.batch.submittedAt = listing.batch.submittedAt.map(round)
        listing.batch.endedAt = listing.batch.endedAt.map(round)
        listing.batch.collectedAt = listing.batch.collectedAt.map(round)
        listing.batch.nextPollAt = listing.batch.nextPollAt.map(round)
        listing.batch.expiresAt = listing.batch.expiresAt.map(round)
        return listing
    }
}
