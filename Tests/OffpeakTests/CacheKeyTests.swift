import Foundation
import OffpeakTestSupport
import Testing

@testable import Offpeak

/// SHA-256 comes from swift-crypto now (issue 10, item 16): the digests, and so the keys of caches
/// that exist, are the ones the hand-written implementation gave.
@Suite(.ownThreads) struct CacheKeyTests {
    /// FIPS 180-4's examples (one block, two blocks, a million bytes) and the padding boundaries.
    @Test func digestsMatchThePublishedVectors() {
        #expect(
            SHA256.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            SHA256.hex(
                "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"
            ) == "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1")
        #expect(
            SHA256.hex([UInt8](repeating: 0x61, count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        #expect(
            SHA256.hex(String(repeating: "a", count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        // A non-ASCII text is hashed as its UTF-8 bytes.
        #expect(SHA256.hex("Grüße") == SHA256.hex(Array("Grüße".utf8)))
    }

    /// The key the hand-written SHA-256 gave this spec's item (read from `offpeak cache ls --json`
    /// after a run of the build before swift-crypto): a cache filled then still answers it.
    @Test func aKeyMadeBeforeSwiftCryptoIsTheSame() throws {
        let workspace = try TemporaryWorkspace()
        let file = try workspace.write(
            "jobs/k.yaml",
            """
            kind: prompt
            tier: fast
            system: Answer in one line.
            template: "{{item}}"
            items: [{id: q1, item: "Why are there two tides a day?"}]
            max_tokens: 60
            """)
        let spec = try JobSpecParser.load(path: file, workspace: workspace.root)
        let planned = RequestPlanner(provider: .sim, model: "claude-haiku-4-5").plan(spec)
        #expect(
            planned.map(\.cacheKey) == ["91cdd98e5d7688ef66b7df0284aea6178244b1475faa27c8327a2e4a135d9cb3"])
    }
}
