package dev.pagewarden.core.model.gguf;

import java.util.List;

/**
 * One GGUF metadata value. Java types per GGUF type: UINT8, INT8, UINT16, INT16 and INT32 are
 * {@link Integer}; UINT32, UINT64 and INT64 are {@link Long} (UINT64 keeps its bit pattern); FLOAT32 is
 * {@link Float}, FLOAT64 {@link Double}, BOOL {@link Boolean}, STRING {@link String} and ARRAY {@link Array}.
 */
public record GgufValue(GgufType type, Object value) {

    /** An array: its element type and elements (each of the Java type above; nested arrays are {@link Array}). */
    public record Array(GgufType elementType, List<Object> items) {
        public Array {
            items = List.copyOf(items);
            for (Object item : items) {
                requireJavaType(elementType, item);
            }
        }
    }

    public GgufValue {
        requireJavaType(type, value);
    }

    private static void requireJavaType(GgufType type, Object value) {
        Class<?> expected = switch (type) {
            case UINT8, INT8, UINT16, INT16, INT32 -> Integer.class;
            case UINT32, UINT64, INT64 -> Long.class;
            case FLOAT32 -> Float.class;
            case FLOAT64 -> Double.class;
            case BOOL -> Boolean.class;
            case STRING -> String.class;
            case ARRAY -> Array.class;
        };
        if (!expected.isInstance(value)) {
            throw new IllegalArgumentException("GGUF " + type + " value must be a " + expected.getSimpleName()
                    + ", got " + (value == null ? "null" : value.getClass().getSimpleName()));
        }
    }

    public static GgufValue string(String s) {
        return new GgufValue(GgufType.STRING, s);
    }

    public static GgufValue uint32(long v) {
        if (v < 0 || v > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("uint32 out of range: " + v);
        }
        return new GgufValue(GgufType.UINT32, v);
    }

    public static GgufValue int32(int v) {
        return new GgufValue(GgufType.INT32, v);
    }

    public static GgufValue float32(float v) {
        return new GgufValue(GgufType.FLOAT32, v);
    }

    public static GgufValue bool(boolean v) {
        return new GgufValue(GgufType.BOOL, v);
    }

    public static GgufValue array(GgufType elementType, List<?> items) {
        return new GgufValue(GgufType.ARRAY, new Array(elementType, List.copyOf(items)));
    }

    /** The value as a signed 64-bit integer, or null when it is not an integer type. */
    Long asLong() {
        return switch (value) {
            case Integer i when type.isInteger() -> (long) i;
            case Long l when type.isInteger() -> l;
            default -> null;
        };
    }

    @Override
    public String toString() {
        if (value instanceof Array(GgufType elementType, List<Object> items)) {
            return "ARRAY<" + elementType + ">[" + items.size() + "]";
        }
        return type + " " + value;
    }
}
