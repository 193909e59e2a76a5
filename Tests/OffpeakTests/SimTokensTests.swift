import Testing

@testable import OffpeakSimKit

struct SimTokensTests {
    @Test func countsFourBytesPerTokenRoundedUp() {
        #expect(SimTokens.count("") == 0)
        #expect(SimTokens.count("a") == 1)
        #expect(SimTokens.count("abcd") == 1)
        #expect(SimTokens.count("abcde") == 2)
        #expect(SimTokens.count("é") == 1)  // 2 bytes
        #expect(SimTokens.count("日本語") == 3)  // 9 bytes
    }

    @Test func prefixCutsAtCharacterBoundary() {
        #expect(SimTokens.prefix(of: "abcdefgh", tokens: 1) == "abcd")
        #expect(SimTokens.prefix(of: "abc", tokens: 5) == "abc")
        // "日" is 3 bytes: two fit in 8 bytes, a third would not.
        #expect(SimTokens.prefix(of: "日日日", tokens: 2) == "日日")
        #expect(SimTokens.prefix(of: "👍🏽x", tokens: 1) == "")  // one 8-byte character
        #expect(SimTokens.prefix(of: "abc", tokens: 0) == "")
    }

    @Test func inputTokensSumEveryBlockWithoutOverhead() {
        let conversation = SimConversation(
            system: [.init(text: "abcde")],
            messages: [
                .init(role: "user", texts: ["abcd", "a"]),
                .init(role: "assistant", texts: ["abcdefghi"]),
            ])
        #expect(conversation.inputTokens == 2 + 1 + 1 + 3)
        #expect(SimConversation(messages: [.init(role: "user", texts: [])]).inputTokens == 0)
    }

    @Test func lastUserTextJoinsBlocks() {
        let conversation = SimConversation(messages: [
            .init(role: "user", texts: ["first"]),
            .init(role: "user", texts: ["a", "b"]),
            .init(role: "assistant", texts: ["reply"]),
        ])
        #expect(conversation.lastUserText == "a\nb")
    }
}
