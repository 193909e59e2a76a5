/// FNV-1a over the UTF-8 bytes: Swift's `hashValue` changes between runs, seeds must not.
func stableHash(_ text: String) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in text.utf8 {
        hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
    }
    return hash
}
