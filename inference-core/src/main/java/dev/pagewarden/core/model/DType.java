package dev.pagewarden.core.model;

/**
 * Weight element types the engine reads. Sizes are per block: Q8_0 stores 32 values as one
 * fp16 scale followed by 32 signed bytes (34 bytes), exactly as GGUF/ggml does.
 */
public enum DType {
    F32(1, 4),
    F16(1, 2),
    Q8_0(32, 34);

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
