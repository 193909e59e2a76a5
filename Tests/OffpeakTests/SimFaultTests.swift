import Testing

@testable import OffpeakSimKit

struct SimFaultTests {
    @Test func parsesFaultNames() throws {
        #expect(try SimFault(name: "429") == .rateLimited)
        #expect(try SimFault(name: " NonJSON ") == .nonJSON)
        #expect(try SimFault(name: "503") == .overloaded)
        #expect(throws: SimConfigError.self) { try SimFault(name: "418") }
    }

    @Test func parsesFaultRates() throws {
        let rates = try FaultRates(parsing: "429=0.1, 500=0.05,truncate=0")
        #expect(rates.entries.map(\.fault) == [.rateLimited, .serverError, .truncate])
        #expect(rates.entries.map(\.probability) == [0.1, 0.05, 0])
        #expect(try FaultRates(parsing: "").entries.isEmpty)
    }

    @Test(arguments: ["429", "429=", "429=x", "429=1.5", "429=0.7,500=0.4", "429=0.1,429=0.1", "teapot=0.1"])
    func rejectsBadFaultRates(spec: String) {
        #expect(throws: SimConfigError.self) { try FaultRates(parsing: spec) }
    }

    @Test func drawLandsInCumulativeSlices() throws {
        let rates = try FaultRates(parsing: "429=0.1,500=0.2")
        #expect(rates.fault(forDraw: 0.0) == .rateLimited)
        #expect(rates.fault(forDraw: 0.099) == .rateLimited)
        #expect(rates.fault(forDraw: 0.1) == .serverError)
        #expect(rates.fault(forDraw: 0.29) == .serverError)
        #expect(rates.fault(forDraw: 0.31) == nil)
        #expect(rates.fault(forDraw: 0.999) == nil)
    }

    @Test func headerComesBeforeQueueAndQueueIsFIFO() throws {
        let injector = FaultInjector()
        injector.enqueue([.rateLimited, .truncate])
        #expect(try injector.faultForNextCall(header: "500") == .serverError)
        #expect(try injector.faultForNextCall(header: nil) == .rateLimited)
        #expect(injector.pending == [.truncate])
        #expect(try injector.faultForNextCall(header: nil) == .truncate)
        #expect(try injector.faultForNextCall(header: nil) == nil)
        #expect(throws: SimConfigError.self) { try injector.faultForNextCall(header: "nope") }
    }

    @Test func seededRatesRepeatAndResetReplays() throws {
        let rates = try FaultRates(parsing: "429=0.3,500=0.2")
        func sequence(_ injector: FaultInjector) throws -> [SimFault?] {
            try (0..<50).map { _ in try injector.faultForNextCall(header: nil) }
        }
        let first = FaultInjector(rates: rates, seed: 42)
        let run = try sequence(first)
        #expect(try sequence(FaultInjector(rates: rates, seed: 42)) == run)
        #expect(run.contains(.rateLimited) && run.contains(.serverError) && run.contains(nil))
        #expect(try sequence(FaultInjector(rates: rates, seed: 7)) != run)
        first.enqueue([.timeout])
        first.reset()
        #expect(first.pending.isEmpty)
        #expect(try sequence(first) == run)
    }

    @Test func clearQueueDropsPendingFaults() {
        let injector = FaultInjector()
        injector.enqueue([.nonJSON, .overloaded])
        injector.clearQueue()
        #expect(injector.pending.isEmpty)
    }
}
