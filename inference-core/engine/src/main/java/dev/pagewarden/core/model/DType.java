package dev.pagewarden.core.model;

/**
 * Weight element types the engine reads, with ggml's block layouts (see {@link Dequantizer} for
 * how each block decodes). Sizes are per block: Q8_0 stores 32 values as one fp16 scale followed
 * by 32 signed bytes (34 bytes); Q4_0 an fp16 scale and 32 nibbles (18 bytes); the K-quants
 * super-blocks of 256 values (Q4_K 144 bytes, Q5_K 176, Q6_K 210).
 */
public enum DType {
    F32(1, 4),
    F16(1, 2),
    Q8_0(32, 34),
    /** bfloat16: the upper half of an fp32. */
    BF16(1, 2),
    /** fp16 d, 16 bytes of nibbles: value = (q - 8) * d. */
    Q4_0(32, 18),
    /** fp16 d, fp16 dmin, 12 bytes of 6-bit scales and mins, 128 bytes of nibbles. */
    Q4_K(256, 144),
    /** Q4_K plus 32 bytes of fifth bits. */
    Q5_K(256, 176),
    /** 128 bytes of low nibbles, 64 bytes of high 2-bit pairs, 16 int8 scales, fp16 d. */
    Q6_K(256, 210);

    private final int blockSize;
    private final int blockBytes;

    DType(int blockSize, int blockBytes) {
        this.blockSize = blockSize;
        this.blockBytes = blockBytes;
    }

    /** Values per block. */
    public int blockSize() {
        return blockSize;
    }

    /** Bytes per block. */
    public int blockBytes() {
        return blockBytes;
    }

    /** Bytes needed for {@code elements} values; elements must be a multiple of the block size. */
    public long bytesFor(long elements) {
        if (elements % blockSize != 0) {
            throw new ModelFormatException(name() + " needs a multiple of " + blockSize + " elements, got " + elements);
        }
        return elements / blockSize * blockBytes;
    }
}
