import Testing

@testable import Offpeak

/// Control characters in names as people read them (issue 21, item 6): not Swift's `\u{a}`.
struct ReadableTextTests {
    @Test func controlCharactersAreWrittenAsInCAndShells() {
        #expect(
            ReadableText.escaped("new\nline\ttab\r\u{1B}[2J\u{7F}\0") == #"new\nline\ttab\r\x1b[2J\x7f\x00"#)
        #expect(ReadableText.escaped("c1\u{85}, separator\u{2028}") == #"c1\u0085, separator\u2028"#)
    }

    /// Only control characters change: a backslash stays, so text shown twice reads the same.
    @Test func otherTextIsLeftAsItIs() {
        for text in ["plain.txt", #"back\slash"#, "café ☕", ""] {
            #expect(ReadableText.escaped(text) == text)
            #expect(
                ReadableText.escaped(ReadableText.escaped("a\nb" + text))
                    == ReadableText.escaped("a\nb" + text))
        }
    }

    /// A byte that does not belong to a UTF-8 character is written as the byte it is.
    @Test func bytesThatAreNotUTF8AreWrittenAsBytes() {
        #expect(
            ReadableText.escaped(bytes: Array("caf".utf8) + [0xFF] + Array("\n.txt".utf8))
                == #"caf\xff\n.txt"#)
        #expect(ReadableText.escaped(bytes: [0xC3, 0xA9, 0xC3]) == #"é\xc3"#)
    }

    /// Every located error names its file this way, whoever chose the name.
    @Test func anErrorsLocationIsShownSo() {
        let error = OffpeakError(.dataError, "not valid UTF-8", location: "docs/new\nline\u{1B}.md:3:1")
        #expect(error.description == #"docs/new\nline\x1b.md:3:1: not valid UTF-8"#)
    }
}
