package dev.pagewarden.core.model.gguf;

/** GGUF metadata value types, numbered as in the file format. */
public enum GgufType {
    UINT8(1), INT8(1), UINT16(2), INT16(2), UINT32(4), INT32(4), FLOAT32(4), BOOL(1),
    STRING(-1), ARRAY(-1), UINT64(8), INT64(8), FLOAT64(8);

    private static final GgufType[] BY_ID = values();
    private final int size;

    GgufType(int size) {
        this.size = size;
    }

    /** Type for a file id, or null when the id is unknown. */
    static GgufType byId(long id) {
        return id >= 0 && id < BY_ID.length ? BY_ID[(int) id] : null;
    }

    int id() {
        return ordinal();
    }

    /** Encoded size of a scalar of this type; -1 for variable-size types. */
    int size() {
        return size;
    }

    /** Fewest bytes one value of this type can take in a file (guards array counts before allocating). */
    int minEncodedSize() {
        return switch (this) {
            case STRING -> 8;       // uint64 length, empty body
            case ARRAY -> 12;       // uint32 element type + uint64 count
            default -> size;
        };
    }

    boolean isInteger() {
        return this != FLOAT32 && this != FLOAT64 && this != BOOL && this != STRING && this != ARRAY;
    }
}
