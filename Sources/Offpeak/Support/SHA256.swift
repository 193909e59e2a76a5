import Crypto

/// SHA-256 as 64 lowercase hex digits: the keys of cached answers and sources, and run spec
/// fingerprints. swift-crypto's `SHA256` does the hashing (BoringSSL's, with the CPU's SHA
/// instructions where it has them); this name stays ours, so callers need not import Crypto, and
/// inside this module it shadows `Crypto.SHA256`, which is therefore always written in full.
/// A digest is the same as the hand-written one it replaces gave, so existing caches stay valid.
public enum SHA256 {
    /// The digest of `bytes`.
    static func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        hex(digest: Crypto.SHA256.hash(data: Array(bytes)))
    }

    /// The digest of `text`'s UTF-8 bytes, hashed in place.
    public static func hex(_ text: String) -> String {
        var text = text
        return text.withUTF8 { hex(digest: Crypto.SHA256.hash(data: UnsafeRawBufferPointer($0))) }
    }

    /// A digest under way: copied, it hashes texts that begin alike without hashing their
    /// beginning again.
    struct Running: Sendable {
        private var hasher = Crypto.SHA256()

        mutating func update(_ bytes: [UInt8]) {
            bytes.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        }

        mutating func update(_ text: String) {
            var text = text
            text.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        }

        /// The digest of what was given, as hex; `self` is left as it was.
        func hex() -> String { SHA256.hex(digest: hasher.finalize()) }
    }

    private static let digits: StaticString = "0123456789abcdef"

    /// The digits written straight into the string's storage: a cache key is made per lookup.
    fileprivate static func hex(digest: Crypto.SHA256.Digest) -> String {
        String(unsafeUninitializedCapacity: Crypto.SHA256.byteCount * 2) { text in
            var index = 0
            for byte in digest {
                text[index] = digits.utf8Start[Int(byte >> 4)]
                text[index + 1] = digits.utf8Start[Int(byte & 0x0F)]
                index += 2
            }
            return index
        }
    }
}
