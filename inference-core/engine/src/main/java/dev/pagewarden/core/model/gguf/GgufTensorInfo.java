package dev.pagewarden.core.model.gguf;

import dev.pagewarden.core.model.DType;

import java.util.List;

/**
 * One tensor entry of a GGUF file.
 *
 * @param name     tensor name, e.g. {@code blk.0.attn_q.weight}
 * @param dims     GGUF dimensions, fastest-varying first: {@code dims[0]} is the row length
 * @param type     element type
 * @param offset   byte offset of the data, relative to the start of the tensor data section
 * @param byteSize bytes of data
 */
public record GgufTensorInfo(String name, List<Long> dims, DType type, long offset, long byteSize) {
    public GgufTensorInfo {
        dims = List.copyOf(dims);
    }

    public long elements() {
        long n = 1;
        for (long d : dims) {
            n *= d;
        }
        return n;
    }
}
