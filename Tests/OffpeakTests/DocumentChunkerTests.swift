import Foundation
import Testing

@testable import Offpeak

struct DocumentChunkerTests {
    /// Paragraphs of sentences, `count` of them, each different.
    static func paragraphs(_ count: Int) -> String {
        (1...count).map { index in
            "Paragraph \(index) opens here. It states fact number \(index * 3). "
                + "A last sentence closes paragraph \(index)."
        }.joined(separator: "\n\n")
    }

    /// Every chunk is a slice of `text`, in order, each starting no later than the previous ended,
    /// the first at the start and the last at the end: no character is lost.
    static func expectCoverage(
        _ chunks: [String], of text: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let bytes = Array(text.utf8)
        var position = 0
        var covered = 0
        for (index, chunk) in chunks.enumerated() {
            let piece = Array(chunk.utf8)
            // The chunk starts somewhere in [position, covered]: find it there.
            let start = (position...covered).first { start in
                start + piece.count <= bytes.count && Array(bytes[start..<start + piece.count]) == piece
            }
            guard let start else {
                Issue.record("chunk \(index + 1) is not where it should be", sourceLocation: sourceLocation)
                return
            }
            position = start + 1
            covered = start + piece.count
        }
        #expect(covered == bytes.count, "the chunks reach the end", sourceLocation: sourceLocation)
    }

    @Test func chunksStayUnderTheLimitAndCoverTheText() {
        let text = Self.paragraphs(200)
        let chunker = DocumentChunker(maxTokens: 300, overlap: 40)
        let chunks = chunker.chunks(of: text)
        #expect(chunks.count > 10)
        #expect(chunks.allSatisfy { TokenEstimator.tokens($0) <= 300 })
        Self.expectCoverage(chunks, of: text)
        #expect(chunker.chunks(of: text) == chunks, "the same text gives the same chunks")
    }

    @Test func chunksEndAtParagraphsWhenTheyCan() {
        let chunks = DocumentChunker(maxTokens: 300, overlap: 0).chunks(of: Self.paragraphs(100))
        for chunk in chunks.dropLast() {
            #expect(chunk.hasSuffix("\n\n"), "\(chunk.suffix(40))")
        }
        for chunk in chunks.dropFirst() {
            #expect(chunk.hasPrefix("Paragraph "), "no overlap: each chunk starts a paragraph")
        }
    }

    @Test func withoutParagraphsChunksEndAtLinesThenSentencesThenSpaces() {
        let lines = (1...300).map { "Line \($0) says one thing." }.joined(separator: "\n")
        for chunk in DocumentChunker(maxTokens: 200, overlap: 0).chunks(of: lines).dropLast() {
            #expect(chunk.hasSuffix(".\n"))
        }
        let sentences = (1...300).map { "Sentence \($0) says one thing." }.joined(separator: " ")
        for chunk in DocumentChunker(maxTokens: 200, overlap: 0).chunks(of: sentences).dropLast() {
            #expect(chunk.hasSuffix(". "))
        }
        let words = (1...2000).map { "word\($0)" }.joined(separator: " ")
        let chunks = DocumentChunker(maxTokens: 200, overlap: 0).chunks(of: words)
        for chunk in chunks.dropLast() { #expect(chunk.hasSuffix(" ")) }
        Self.expectCoverage(chunks, of: words)
    }

    @Test func eachChunkRepeatsTheEndOfThePreviousOne() {
        let text = Self.paragraphs(200)
        let chunks = DocumentChunker(maxTokens: 300, overlap: 50).chunks(of: text)
        for (previous, next) in zip(chunks, chunks.dropFirst()) {
            // The overlap is a whole-word suffix of the previous chunk, at most 50 tokens long.
            let shared = (1...min(300, previous.utf8.count, next.utf8.count)).last { length in
                previous.utf8.suffix(length).elementsEqual(next.utf8.prefix(length))
            }
            let length = shared ?? 0
            #expect(length > 100 && length <= 200, "overlap of \(length) bytes")
        }
        Self.expectCoverage(chunks, of: text)
    }

    @Test func tinyAndEmptyTextsAreOneChunk() {
        let chunker = DocumentChunker(maxTokens: 100, overlap: 10)
        #expect(chunker.chunks(of: "") == [""])
        #expect(chunker.chunks(of: "One sentence.") == ["One sentence."])
        let exact = String(repeating: "a", count: 400)
        #expect(chunker.chunks(of: exact) == [exact], "400 bytes are exactly 100 tokens")
        #expect(chunker.chunks(of: exact + "b").count == 2)
    }

    @Test func aHugeSingleLineIsCutInsideWordsWithoutBreakingCharacters() {
        let text = (1...1500).map { "é\($0)ü" }.joined()
        let chunks = DocumentChunker(maxTokens: 250, overlap: 20).chunks(of: text)
        #expect(chunks.count > 5)
        #expect(chunks.allSatisfy { TokenEstimator.tokens($0) <= 250 })
        #expect(chunks.allSatisfy { !$0.contains("\u{FFFD}") }, "no UTF-8 character is split")
        Self.expectCoverage(chunks, of: text)
    }

    @Test func overlapIsKeptUnderHalfAChunk() {
        let chunker = DocumentChunker(maxTokens: 100, overlap: 500)
        #expect(chunker.overlap == 49)
        let text = Self.paragraphs(50)
        let chunks = chunker.chunks(of: text)
        Self.expectCoverage(chunks, of: text)
        #expect(chunks.count < text.utf8.count / 100, "every chunk moves on")
    }
}
