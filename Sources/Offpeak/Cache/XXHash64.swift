/// XXH64 (Yann Collet's xxHash, 64-bit, seed 0): the check against corruption in a cached answer's
/// payload (see `AnswerPayload`).
///
/// The LZ4 frame's own check is XXH32 over the decompressed content, about half a microsecond on a
/// 2 KB answer: as much as the rest of the decode. XXH64 reads 8 bytes a step instead of 4 and runs
/// over the compressed bytes, which are fewer, so the same guarantee (any change to the stored bytes
/// is caught, but for a 2^-64 chance) costs a fraction of it. Written here because liblz4 does not
/// export its copy; the digests are xxHash's own (`XXHash64Tests` holds reference values).
enum XXHash64 {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    /// The digest of `bytes`.
    static func digest(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let count = bytes.count
        guard let base = bytes.baseAddress else { return finish(prime5, rest: bytes) }
        var offset = 0
        var hash: UInt64
        if count >= 32 {
            var lanes = (prime1 &+ prime2, prime2, UInt64(0), 0 &- prime1)
            while offset + 32 <= count {
                lanes.0 = round(lanes.0, load64(base, offset))
                lanes.1 = round(lanes.1, load64(base, offset + 8))
                lanes.2 = round(lanes.2, load64(base, offset + 16))
                lanes.3 = round(lanes.3, load64(base, offset + 24))
                offset += 32
            }
            hash =
                rotate(lanes.0, 1) &+ rotate(lanes.1, 7) &+ rotate(lanes.2, 12) &+ rotate(lanes.3, 18)
            hash = merge(hash, lanes.0)
            hash = merge(hash, lanes.1)
            hash = merge(hash, lanes.2)
            hash = merge(hash, lanes.3)
        } else {
            hash = prime5
        }
        return finish(hash &+ UInt64(count), rest: UnsafeRawBufferPointer(rebasing: bytes[offset...]))
    }

    /// Folds in the last bytes (fewer than 32) and mixes the bits.
    private static func finish(_ start: UInt64, rest: UnsafeRawBufferPointer) -> UInt64 {
        var hash = start
        var offset = 0
        if let base = rest.baseAddress {
            while offset + 8 <= rest.count {
                hash ^= round(0, load64(base, offset))
                hash = rotate(hash, 27) &* prime1 &+ prime4
                offset += 8
            }
            if offset + 4 <= rest.count {
                hash ^=
                    UInt64(UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
                    &* prime1
                hash = rotate(hash, 23) &* prime2 &+ prime3
                offset += 4
            }
            while offset < rest.count {
                hash ^= UInt64(rest[offset]) &* prime5
                hash = rotate(hash, 11) &* prime1
                offset += 1
            }
        }
        hash ^= hash >> 33
        hash = hash &* prime2
        hash ^= hash >> 29
        hash = hash &* prime3
        hash ^= hash >> 32
        return hash
    }

    private static func round(_ lane: UInt64, _ input: UInt64) -> UInt64 {
        rotate(lane &+ input &* prime2, 31) &* prime1
    }

    private static func merge(_ hash: UInt64, _ lane: UInt64) -> UInt64 {
        (hash ^ round(0, lane)) &* prime1 &+ prime4
    }

    private static func rotate(_ value: UInt64, _ bits: UInt64) -> UInt64 {
        value &<< bits | value &>> (64 &- bits)
    }

    private static func load64(_ base: UnsafeRawPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
}
