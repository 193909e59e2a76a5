/// Splits a long text into overlapping chunks of at most `maxTokens` tokens (`TokenEstimator`
/// units), for summarizing a document part by part.
///
/// A chunk ends at the last paragraph break that fits, else the last line break, else the last
/// sentence end, else the last space, and only as a last resort inside a word (never inside a
/// UTF-8 character). Each chunk after the first starts up to `overlap` tokens before the previous
/// one ended, at a word boundary when there is one. Chunks are contiguous slices of the text, each
/// starting no later than the previous one ended, so every character is in at least one chunk.
/// The same text always gives the same chunks.
struct DocumentChunker: Sendable {
    let maxTokens: Int
    let overlap: Int

    /// - Parameters:
    ///   - maxTokens: the most tokens a chunk may have (at least 1).
    ///   - overlap: tokens repeated from the previous chunk; kept under half a chunk.
    init(maxTokens: Int, overlap: Int) {
        self.maxTokens = max(1, maxTokens)
        self.overlap = max(0, min(overlap, (self.maxTokens - 1) / 2))
    }

    /// The chunks of `text`, in order; a text that fits is one chunk (an empty text too).
    func chunks(of text: String) -> [String] {
        let bytes = Array(text.utf8)
        // A chunk of at most 4 * maxTokens bytes is at most maxTokens tokens: (bytes + 3) / 4.
        let limit = maxTokens * 4
        guard bytes.count > limit else { return [text] }
        var chunks: [String] = []
        var start = 0
        while true {
            if bytes.count - start <= limit {
                chunks.append(String(decoding: bytes[start...], as: UTF8.self))
                return chunks
            }
            let end = cut(bytes, from: start, limit: limit)
            chunks.append(String(decoding: bytes[start..<end], as: UTF8.self))
            start = nextStart(bytes, from: start, end: end)
        }
    }

    /// Where the chunk starting at `start` ends: the best boundary in its second half.
    private func cut(_ bytes: [UInt8], from start: Int, limit: Int) -> Int {
        let hardEnd = start + limit
        // Boundaries in the first half would make short chunks (and, with the overlap, no progress).
        let earliest = start + limit / 2 + 1
        let newline = UInt8(ascii: "\n")
        let space = UInt8(ascii: " ")
        let rules: [(Int) -> Bool] = [
            { i in bytes[i - 1] == newline && bytes[i - 2] == newline },
            { i in bytes[i - 1] == newline },
            { i in
                Self.isSpace(bytes[i - 1])
                    && [UInt8(ascii: "."), UInt8(ascii: "!"), UInt8(ascii: "?")]
                        .contains(bytes[i - 2])
            },
            { i in bytes[i - 1] == space || bytes[i - 1] == UInt8(ascii: "\t") },
        ]
        for rule in rules {
            var index = hardEnd
            while index >= max(earliest, 2) {
                if rule(index) { return index }
                index -= 1
            }
        }
        return Self.characterStart(bytes, atOrBefore: hardEnd)
    }

    /// Where the next chunk starts: `overlap` tokens before `end`, moved forward to just after a
    /// space or line break when one comes before `end`, so the overlap starts with a whole word.
    private func nextStart(_ bytes: [UInt8], from start: Int, end: Int) -> Int {
        let raw = max(start + 1, end - overlap * 4)
        guard raw < end else { return end }
        var index = raw
        while index < end {
            if index > 0, Self.isSpace(bytes[index - 1]) { return index }
            index += 1
        }
        return Self.characterStart(bytes, atOrAfter: raw, before: end)
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\t")
            || byte == UInt8(ascii: "\r")
    }

    /// A UTF-8 continuation byte is `10xxxxxx`: a character never starts there.
    private static func isContinuation(_ byte: UInt8) -> Bool {
        byte & 0b1100_0000 == 0b1000_0000
    }

    private static func characterStart(_ bytes: [UInt8], atOrBefore index: Int) -> Int {
        var index = index
        while index > 0, index < bytes.count, isContinuation(bytes[index]) { index -= 1 }
        return index
    }

    private static func characterStart(_ bytes: [UInt8], atOrAfter index: Int, before end: Int) -> Int {
        var index = index
        while index < end, isContinuation(bytes[index]) { index += 1 }
        return index
    }
}
