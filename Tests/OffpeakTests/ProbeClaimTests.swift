import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// Probe claims (issue 46, item 9): one process at a time probes a batch size, whichever engine
/// holds the store.
@Suite(.ownThreads) struct ProbeClaimTests {
    static let key = ProbeKey(job: "classify", provider: "sim", model: "m", size: 8)

    @Test func oneProcessProbesASizeUntilItGivesItBackOrItsClaimLapses() throws {
        let workspace = try TemporaryWorkspace()
        let store = try workspace.openStore()
        let audits = store.audits
        let now = Date()
        // Another host's process: alive as far as this host can tell.
        let other = "elsewhere:4242"
        #expect(try audits.claimProbe(Self.key, owner: other, host: "box-b", ttl: 60, now: now) == nil)
        #expect(
            try audits.claimProbe(Self.key, owner: ProcessOwner.current, host: "box-a", ttl: 60, now: now)
                == other)
        #expect(try audits.prober(of: Self.key, now: now) == other)
        // Its own claim again: renewed, still its.
        #expect(try audits.claimProbe(Self.key, owner: other, host: "box-b", ttl: 60, now: now) == nil)
        // Another size is another claim.
        var smaller = Self.key
        smaller.size = 4
        #expect(
            try audits.claimProbe(smaller, owner: ProcessOwner.current, host: "box-a", ttl: 60, now: now)
                == nil)
        // Given back when decided: the next asks it.
        try audits.releaseProbes(owner: other, key: Self.key)
        #expect(try audits.prober(of: Self.key, now: now) == nil)
        #expect(
            try audits.claimProbe(Self.key, owner: ProcessOwner.current, host: "box-a", ttl: 60, now: now)
                == nil)
        // A claim past its time to live is free.
        #expect(try audits.prober(of: Self.key, now: now + 61) == nil)
        #expect(try audits.claimProbe(Self.key, owner: other, host: "box-b", ttl: 60, now: now + 61) == nil)
        // A process of this host that is gone holds nothing.
        let host = ProcessOwner.current.split(separator: ":")[0]
        let gone = "\(host):\(Int32.max - 1)"
        #expect(
            try audits.claimProbe(smaller, owner: gone, host: "box-a", ttl: 60, now: now)
                == ProcessOwner.current)
        try audits.releaseProbes(owner: ProcessOwner.current, key: nil)
        #expect(try audits.claimProbe(smaller, owner: gone, host: "box-a", ttl: 60, now: now) == nil)
        #expect(try audits.prober(of: smaller, now: now) == nil, "its process is gone")
        #expect(try audits.claimProbe(smaller, owner: other, host: "box-b", ttl: 60, now: now) == nil)
    }
}
