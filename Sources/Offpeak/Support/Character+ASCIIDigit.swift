extension Character {
    /// `0`...`9` only: `Character.isNumber` also accepts other scripts' digits and fractions, which
    /// no duration, size or count a user writes for offpeak may hold.
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
