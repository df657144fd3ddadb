package dev.pagewarden.core.model.safetensors;

import dev.pagewarden.core.model.DType;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;

/**
 * One tensor of a safetensors file: its element type, its shape (outermost first, as PyTorch lists it)
 * and its bytes, a view over the mapped file.
 */
public record SafetensorsTensor(Path file, String name, DType type, List<Long> shape, MemorySegment data) {

    public SafetensorsTensor {
        shape = List.copyOf(shape);
    }

    public long elements() {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        return n;
    }
}
