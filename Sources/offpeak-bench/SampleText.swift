/// Seeded, English-like text: sentences of common words, so LZ4 sees what answers look like
/// (not random bytes, which do not compress, nor one repeated line, which compresses absurdly).
struct SampleText {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    /// SplitMix64: small, fast and the same on every machine.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// About `bytes` UTF-8 bytes of sentences, ending at a sentence end.
    mutating func paragraph(bytes: Int) -> String {
        var text = ""
        while text.utf8.count < bytes {
            var sentence = ""
            let length = 6 + below(14)
            for index in 0..<length {
                var word = Self.words[below(Self.words.count)]
                if index == 0 { word = word.prefix(1).uppercased() + word.dropFirst() }
                sentence += (index == 0 ? "" : below(9) == 0 ? ", " : " ") + word
            }
            if below(5) == 0 { sentence += " (\(below(1000)) items, \(below(100)) %)" }
            text += (text.isEmpty ? "" : below(6) == 0 ? "\n\n" : " ") + sentence + "."
        }
        return text
    }

    static let words = """
        the of and to in is that it for on was with as by be at this are from or an which have not \
        has but were all their can more one also its been had there other some these when will would \
        into than only time new first most may after over such where between each many through both \
        under during while cache answer request model batch token prompt price cost job tick window \
        network power battery queue result source document summary item provider system server \
        latency budget retry schedule checkpoint segment ledger value report output input file \
        research question evidence study measure change increase decrease average total market \
        energy water heat engine chain tide bee bread starter backup disk copy restore winter summer \
        morning evening people city river valley garden kitchen office engineer teacher doctor
        """.split(separator: " ").map(String.init)
}
