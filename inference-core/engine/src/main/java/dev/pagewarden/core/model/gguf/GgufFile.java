package dev.pagewarden.core.model.gguf;

import dev.pagewarden.core.model.ModelFormatException;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A parsed GGUF file: header, metadata in file order and tensor entries, plus the memory-mapped file
 * the tensor data lives in (owned by the arena given to {@link GgufReader#read}). Typed accessors
 * fail with a {@link ModelFormatException} naming the file and the key.
 *
 * @param dataOffset absolute file offset of the tensor data section
 */
public record GgufFile(Path file, int version, Map<String, GgufValue> metadata, List<GgufTensorInfo> tensors,
                       int alignment, long dataOffset, MemorySegment mapped) {

    public GgufFile {
        metadata = Collections.unmodifiableMap(new LinkedHashMap<>(metadata));
        tensors = List.copyOf(tensors);
    }

    public Optional<GgufValue> get(String key) {
        return Optional.ofNullable(metadata.get(key));
    }

    public Optional<GgufTensorInfo> tensor(String name) {
        return tensors.stream().filter(t -> t.name().equals(name)).findFirst();
    }

    /** View of a tensor's bytes inside the mapped file (bounds were checked when the file was read). */
    public MemorySegment data(GgufTensorInfo tensor) {
        return mapped.asSlice(dataOffset + tensor.offset(), tensor.byteSize());
    }

    public String string(String key) {
        if (require(key).value() instanceof String s) {
            return s;
        }
        throw wrongType(key, "a string");
    }

    /** An integer of any GGUF integer type, which must lie in [min, max]. */
    public long integer(String key, long min, long max) {
        Long v = require(key).asLong();
        if (v == null) {
            throw wrongType(key, "an integer");
        }
        if (v < min || v > max) {
            String shown = metadata.get(key).type() == GgufType.UINT64 ? Long.toUnsignedString(v) : Long.toString(v);
            throw new ModelFormatException(file + ": metadata " + key + " = " + shown + " is out of range ["
                    + min + ", " + max + "]");
        }
        return v;
    }

    /** A FLOAT32 or FLOAT64 value. */
    public double number(String key) {
        return switch (require(key).value()) {
            case Float f -> f;
            case Double d -> d;
            default -> throw wrongType(key, "a float");
        };
    }

    public List<String> strings(String key) {
        return items(key, GgufType.STRING).stream().map(String.class::cast).toList();
    }

    public float[] floats(String key) {
        List<Object> items = items(key, GgufType.FLOAT32);
        float[] out = new float[items.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = (Float) items.get(i);
        }
        return out;
    }

    private List<Object> items(String key, GgufType elementType) {
        if (require(key).value() instanceof GgufValue.Array(GgufType t, List<Object> items) && t == elementType) {
            return items;
        }
        throw wrongType(key, "an array of " + elementType);
    }

    private GgufValue require(String key) {
        GgufValue v = metadata.get(key);
        if (v == null) {
            throw new ModelFormatException(file + ": missing metadata " + key);
        }
        return v;
    }

    private ModelFormatException wrongType(String key, String expected) {
        return new ModelFormatException(file + ": metadata " + key + " should be " + expected + ", got "
                + metadata.get(key));
    }
}
