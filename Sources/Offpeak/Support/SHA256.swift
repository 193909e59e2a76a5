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

    /// The digest of `prefix`'s UTF-8 bytes followed by `bytes`, without joining them first.
    static func hex(_ prefix: String, _ bytes: [UInt8]) -> String {
        var hasher = Crypto.SHA256()
        var prefix = prefix
        prefix.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        bytes.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        return hex(digest: hasher.finalize())
    }

    private static let digits: StaticString = "0123456789abcdef"

    /// The digits written straight into the string's storage: a cache key is made per lookup.
    private static func hex(digest: Crypto.SHA256.Digest) -> String {
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
