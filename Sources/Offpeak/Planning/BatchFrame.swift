/// The text every item of a batched prompt shares, written once: the lines before and after the
/// part that differs. A job's template usually wraps each item in the same words
/// (`Summarize the following document.\n\n<document>\n{{item}}\n</document>`); sent once per prompt
/// instead of once per item, it costs its tokens once. On W-summarize's provider-batch lane that is
/// 14 of every item's 430 input tokens.
///
/// offpeak-sim rebuilds each item's whole text from the frame (`BatchItem`), so its answer is the
/// one the item gets alone.
struct BatchFrame: Sendable, Equatable {
    /// Where an item's own text goes in the frame.
    static let placeholder = "{{item}}"
    /// Shared text shorter than this (UTF-8 bytes, about 8 tokens) is not worth the frame's own
    /// words.
    static let leastShared = 32
    /// Text a frame may not hold: the prompt's own markers, which would make the items ambiguous.
    private static let markers = [placeholder, "<item id=\"", "</item>", "<frame>", "</frame>"]

    /// Whole lines every item starts with, each ending in its newline.
    let prefix: String
    /// Whole lines every item ends with, starting at a newline.
    let suffix: String

    /// The frame of `texts`, or nil when they share too little (or are fewer than two).
    ///
    /// The shared text is cut back to whole lines, so a frame never splits a word or a character,
    /// and an item's own first and last lines stay in the item.
    init?(texts: [String]) {
        guard texts.count > 1, let first = texts.first else { return nil }
        let views = texts.map { Array($0.utf8) }
        let shortest = views.map(\.count).min() ?? 0
        var head = Self.commonCount(views, shortest) { view, index in view[index] }
        head = Self.lastLineBreak(in: Array(first.utf8), before: head).map { $0 + 1 } ?? 0
        var tail = Self.commonCount(views, shortest - head) { view, index in view[view.count - 1 - index] }
        tail = Self.firstLineBreak(in: Array(first.utf8.suffix(tail))).map { tail - $0 } ?? 0
        guard head + tail >= Self.leastShared else { return nil }
        let bytes = Array(first.utf8)
        prefix = String(decoding: bytes[..<head], as: UTF8.self)
        suffix = String(decoding: bytes[(bytes.count - tail)...], as: UTF8.self)
        guard !Self.markers.contains(where: { prefix.contains($0) || suffix.contains($0) }) else {
            return nil
        }
    }

    /// The frame as the prompt shows it.
    var text: String { prefix + Self.placeholder + suffix }

    /// The part of `text` (one of the texts the frame was made from) that is the item's own.
    func body(of text: String) -> String {
        let bytes = Array(text.utf8)
        return String(decoding: bytes[prefix.utf8.count..<(bytes.count - suffix.utf8.count)], as: UTF8.self)
    }

    /// How many leading positions (as `byte` reads them) all views share, up to `limit`.
    private static func commonCount(_ views: [[UInt8]], _ limit: Int, byte: ([UInt8], Int) -> UInt8) -> Int {
        guard let first = views.first else { return 0 }
        var count = 0
        while count < limit {
            let value = byte(first, count)
            guard views.allSatisfy({ byte($0, count) == value }) else { break }
            count += 1
        }
        return count
    }

    private static func lastLineBreak(in bytes: [UInt8], before end: Int) -> Int? {
        bytes[..<end].lastIndex(of: UInt8(ascii: "\n"))
    }

    private static func firstLineBreak(in bytes: [UInt8]) -> Int? {
        bytes.firstIndex(of: UInt8(ascii: "\n"))
    }
}
