import CLZ4

/// Raw LZ4 blocks: no frame, so no header to parse and no checksum of liblz4's. What holds a block
/// keeps its size and its own check against corruption (see `AnswerPayload`).
enum LZ4Block {
    /// `bytes` compressed, or nil when liblz4 refuses them (over `LZ4_MAX_INPUT_SIZE`, about 2 GB).
    static func compress(_ bytes: [UInt8]) -> [UInt8]? {
        guard bytes.count <= LZ4_MAX_INPUT_SIZE else { return nil }
        let bound = Int(LZ4_compressBound(Int32(bytes.count)))
        let block = [UInt8](unsafeUninitializedCapacity: max(bound, 1)) { output, count in
            count = bytes.withUnsafeBytes { input in
                Int(
                    LZ4_compress_default(
                        input.baseAddress?.assumingMemoryBound(to: CChar.self),
                        UnsafeMutableRawPointer(output.baseAddress)?.assumingMemoryBound(to: CChar.self),
                        Int32(input.count), Int32(bound)))
            }
        }
        return block.isEmpty && !bytes.isEmpty ? nil : block
    }

    /// Decompresses `block` into the whole of `output`.
    /// - Returns: false when the block is malformed or does not decompress to exactly
    ///   `output.count` bytes (liblz4's safe decoder never writes past `output`).
    static func decompress(_ block: UnsafeRawBufferPointer, into output: UnsafeMutableBufferPointer<UInt8>)
        -> Bool
    {
        guard block.count <= Int32.max, output.count <= Int32.max else { return false }
        let written = LZ4_decompress_safe(
            block.baseAddress?.assumingMemoryBound(to: CChar.self),
            UnsafeMutableRawPointer(output.baseAddress)?.assumingMemoryBound(to: CChar.self),
            Int32(block.count), Int32(output.count))
        return Int(written) == output.count
    }
}
