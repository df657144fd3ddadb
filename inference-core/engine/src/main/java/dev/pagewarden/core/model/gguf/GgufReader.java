package dev.pagewarden.core.model.gguf;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ModelFormatException;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads GGUF v2/v3 files (little-endian). The file is memory-mapped; metadata is parsed onto the heap
 * and tensor data stays in the mapping. The header is untrusted: every count, length and offset is
 * checked against the bytes left in the file before anything is allocated, so a lying or truncated
 * file fails with a {@link ModelFormatException} naming the file and the field.
 */
public final class GgufReader {
    /** "GGUF" read as a little-endian uint32. */
    public static final int MAGIC = 0x46554747;
    public static final int DEFAULT_ALIGNMENT = 32;
    private static final int MAX_DIMS = 4;
    private static final int MAX_ARRAY_DEPTH = 8;

    /** ggml type ids, to name the types we cannot read in error messages. */
    private static final Map<Integer, String> GGML_TYPE_NAMES = Map.ofEntries(
            Map.entry(0, "F32"), Map.entry(1, "F16"), Map.entry(2, "Q4_0"), Map.entry(3, "Q4_1"),
            Map.entry(6, "Q5_0"), Map.entry(7, "Q5_1"), Map.entry(8, "Q8_0"), Map.entry(9, "Q8_1"),
            Map.entry(10, "Q2_K"), Map.entry(11, "Q3_K"), Map.entry(12, "Q4_K"), Map.entry(13, "Q5_K"),
            Map.entry(14, "Q6_K"), Map.entry(15, "Q8_K"), Map.entry(16, "IQ2_XXS"), Map.entry(17, "IQ2_XS"),
            Map.entry(18, "IQ3_XXS"), Map.entry(19, "IQ1_S"), Map.entry(20, "IQ4_NL"), Map.entry(21, "IQ3_S"),
            Map.entry(22, "IQ2_S"), Map.entry(23, "IQ4_XS"), Map.entry(24, "I8"), Map.entry(25, "I16"),
            Map.entry(26, "I32"), Map.entry(27, "I64"), Map.entry(28, "F64"), Map.entry(29, "IQ1_M"),
            Map.entry(30, "BF16"), Map.entry(34, "TQ1_0"), Map.entry(35, "TQ2_0"), Map.entry(39, "MXFP4"));

    private GgufReader() {
    }

    /** The ggml type id GGUF uses for {@code type}. */
    static int ggmlTypeId(DType type) {
        return switch (type) {
            case F32 -> 0;
            case F16 -> 1;
            case Q8_0 -> 8;
            case BF16 -> 30;
            case Q4_0 -> 2;
            case Q4_K -> 12;
            case Q5_K -> 13;
            case Q6_K -> 14;
        };
    }

    /** True when the file starts with the GGUF magic (a cheap check for format detection). */
    public static boolean hasMagic(MemorySegment head) {
        return head.byteSize() >= 4 && head.get(Cursor.I32, 0) == MAGIC;
    }

    /** Maps {@code file} into {@code arena} and parses its header. */
    public static GgufFile read(Path file, Arena arena) {
        MemorySegment all;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            all = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena);
        } catch (IOException e) {
            throw new ModelFormatException(file + ": cannot read GGUF file: " + e.getMessage(), e);
        }
        return parse(file, all);
    }

    static GgufFile parse(Path file, MemorySegment all) {
        Cursor in = new Cursor(file, all);
        int magic = in.i32("magic");
        if (magic != MAGIC) {
            throw in.error("magic", String.format("not a GGUF file (magic 0x%08x, expected \"GGUF\")", magic));
        }
        int version = in.i32("version");
        if (version == 1) {
            throw in.error("version", "GGUF version 1 is not supported (supported: 2, 3)");
        }
        if (version != 2 && version != 3) {
            String hint = Integer.reverseBytes(version) == 2 || Integer.reverseBytes(version) == 3
                    ? " (a big-endian GGUF file; only little-endian is supported)" : " (supported: 2, 3)";
            throw in.error("version", "unsupported GGUF version " + Integer.toUnsignedString(version) + hint);
        }
        long tensorCount = in.count("tensor_count", 8 + 4 + 8 + 4 + 8);   // smallest tensor entry
        long kvCount = in.count("metadata_kv_count", 8 + 4 + 1);         // smallest key/value pair

        Map<String, GgufValue> metadata = new LinkedHashMap<>();
        for (long i = 0; i < kvCount; i++) {
            String key = in.string("metadata key #" + i);
            if (metadata.containsKey(key)) {
                throw in.error("metadata " + key, "duplicate key");
            }
            GgufType type = in.valueType("metadata " + key + " type");
            metadata.put(key, in.value(type, "metadata " + key, 0));
        }
        int alignment = alignment(in, metadata.get("general.alignment"));

        List<TensorEntry> entries = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (long i = 0; i < tensorCount; i++) {
            TensorEntry e = tensorEntry(in, i, alignment);
            if (!names.add(e.name)) {
                throw in.error("tensor " + e.name, "duplicate tensor name");
            }
            entries.add(e);
        }
        long dataOffset = alignUp(in.position(), alignment);
        List<GgufTensorInfo> tensors = checkData(in, entries, dataOffset);
        return new GgufFile(file, version, metadata, tensors, alignment, dataOffset, all);
    }

    private static int alignment(Cursor in, GgufValue value) {
        if (value == null) {
            return DEFAULT_ALIGNMENT;
        }
        Long a = value.asLong();
        if (a == null || a <= 0 || a > 1 << 20 || Long.bitCount(a) != 1) {
            throw in.error("general.alignment", "must be a power of two up to 1048576, got " + value);
        }
        return a.intValue();
    }

    /** A tensor entry before its data range has been checked. */
    private record TensorEntry(String name, List<Long> dims, DType type, long offset, long byteSize) {
    }

    private static TensorEntry tensorEntry(Cursor in, long index, int alignment) {
        String name = in.string("tensor #" + index + " name");
        String field = "tensor " + name;
        long nDims = in.u32(field + " n_dims");
        if (nDims < 1 || nDims > MAX_DIMS) {
            throw in.error(field, "n_dims " + nDims + " out of range [1, " + MAX_DIMS + "]");
        }
        List<Long> dims = new ArrayList<>();
        long elements = 1;
        for (int d = 0; d < nDims; d++) {
            long ne = in.i64(field + " ne[" + d + "]");
            if (ne < 1 || ne > Integer.MAX_VALUE) {
                throw in.error(field, "dimension ne[" + d + "] = " + Long.toUnsignedString(ne)
                        + " out of range [1, " + Integer.MAX_VALUE + "]");
            }
            try {
                elements = Math.multiplyExact(elements, ne);
            } catch (ArithmeticException overflow) {
                throw in.error(field, "dimensions " + dims + " x " + ne + " overflow 64 bits");
            }
            dims.add(ne);
        }
        long typeId = in.u32(field + " type");
        DType type = dtype(typeId);
        if (type == null) {
            throw in.error(field, "unsupported GGUF tensor type " + typeId + " ("
                    + GGML_TYPE_NAMES.getOrDefault((int) typeId, "unknown") + "); supported: F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K");
        }
        if (dims.getFirst() % type.blockSize() != 0) {
            throw in.error(field, "row length ne[0] = " + dims.getFirst() + " is not a multiple of the " + type
                    + " block size " + type.blockSize());
        }
        long offset = in.i64(field + " offset");
        if (offset < 0 || offset % alignment != 0) {
            throw in.error(field, "data offset " + Long.toUnsignedString(offset)
                    + " is not a non-negative multiple of the alignment " + alignment);
        }
        long byteSize;
        try {
            byteSize = Math.multiplyExact(elements / type.blockSize(), type.blockBytes());
        } catch (ArithmeticException overflow) {
            throw in.error(field, "data size of " + elements + " elements overflows 64 bits");
        }
        return new TensorEntry(name, dims, type, offset, byteSize);
    }

    private static DType dtype(long ggmlType) {
        for (DType t : DType.values()) {
            if (ggmlTypeId(t) == ggmlType) {
                return t;
            }
        }
        return null;
    }

    /** Every tensor must lie inside the file, and no two may share bytes. */
    private static List<GgufTensorInfo> checkData(Cursor in, List<TensorEntry> entries, long dataOffset) {
        long dataBytes = in.size() - dataOffset;
        if (!entries.isEmpty() && dataBytes < 0) {
            throw in.error("tensor data", "truncated: the data section would start at byte " + dataOffset
                    + " but the file has " + in.size() + " bytes");
        }
        for (TensorEntry e : entries) {
            if (e.offset > dataBytes || e.byteSize > dataBytes - e.offset) {
                throw in.error("tensor " + e.name, "data bytes " + (dataOffset + e.offset) + ".."
                        + (dataOffset + e.offset + e.byteSize) + " extend beyond the end of the file ("
                        + in.size() + " bytes)");
            }
        }
        List<TensorEntry> byOffset = new ArrayList<>(entries);
        byOffset.sort(Comparator.comparingLong(TensorEntry::offset));
        for (int i = 1; i < byOffset.size(); i++) {
            TensorEntry prev = byOffset.get(i - 1);
            TensorEntry cur = byOffset.get(i);
            if (cur.offset < prev.offset + prev.byteSize) {
                throw in.error("tensor " + cur.name, "data at offset " + cur.offset + " overlaps tensor "
                        + prev.name + " (offset " + prev.offset + ", " + prev.byteSize + " bytes)");
            }
        }
        return entries.stream()
                .map(e -> new GgufTensorInfo(e.name, e.dims, e.type, e.offset, e.byteSize))
                .toList();
    }

    static long alignUp(long n, long alignment) {
        return (n + alignment - 1) / alignment * alignment;
    }

    /** Little-endian reads over the mapped file; each checks the bytes left first. */
    private static final class Cursor {
        static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

        private final Path file;
        private final MemorySegment all;
        private long pos;

        Cursor(Path file, MemorySegment all) {
            this.file = file;
            this.all = all;
        }

        long position() {
            return pos;
        }

        long size() {
            return all.byteSize();
        }

        long remaining() {
            return all.byteSize() - pos;
        }

        ModelFormatException error(String field, String problem) {
            return new ModelFormatException(file + ": " + field + ": " + problem);
        }

        /** Claims {@code n} bytes at the cursor and returns their offset. */
        private long take(long n, String field) {
            if (n > remaining()) {
                throw error(field, "truncated: needs " + n + " bytes at offset " + pos + " but the file has "
                        + all.byteSize() + " bytes");
            }
            long at = pos;
            pos += n;
            return at;
        }

        int i32(String field) {
            return all.get(I32, take(4, field));
        }

        long u32(String field) {
            return Integer.toUnsignedLong(i32(field));
        }

        long i64(String field) {
            return all.get(I64, take(8, field));
        }

        /** A uint64 count of items that each take at least {@code minItemBytes}: must fit in what is left. */
        long count(String field, long minItemBytes) {
            long n = i64(field);
            if (n < 0 || n > remaining() / minItemBytes) {
                throw error(field, Long.toUnsignedString(n) + " is impossible: the " + remaining()
                        + " bytes left in the file hold at most " + remaining() / minItemBytes);
            }
            return n;
        }

        String string(String field) {
            long len = i64(field + " length");
            if (len < 0 || len > remaining()) {
                throw error(field, "string length " + Long.toUnsignedString(len) + " exceeds the " + remaining()
                        + " bytes left in the file");
            }
            if (len > Integer.MAX_VALUE - 8) {
                throw error(field, "string length " + len + " is too large");
            }
            long at = take(len, field);
            byte[] bytes = all.asSlice(at, len).toArray(ValueLayout.JAVA_BYTE);
            return new String(bytes, StandardCharsets.UTF_8);
        }

        GgufType valueType(String field) {
            long id = u32(field);
            GgufType t = GgufType.byId(id);
            if (t == null) {
                throw error(field, "unknown metadata value type " + id);
            }
            return t;
        }

        GgufValue value(GgufType type, String field, int depth) {
            Object v = switch (type) {
                case UINT8 -> Byte.toUnsignedInt(all.get(ValueLayout.JAVA_BYTE, take(1, field)));
                case INT8 -> (int) all.get(ValueLayout.JAVA_BYTE, take(1, field));
                case UINT16 -> Short.toUnsignedInt(all.get(I16, take(2, field)));
                case INT16 -> (int) all.get(I16, take(2, field));
                case UINT32 -> u32(field);
                case INT32 -> i32(field);
                case UINT64, INT64 -> i64(field);
                case FLOAT32 -> all.get(F32, take(4, field));
                case FLOAT64 -> all.get(F64, take(8, field));
                case BOOL -> bool(field);
                case STRING -> string(field);
                case ARRAY -> array(field, depth);
            };
            return new GgufValue(type, v);
        }

        private boolean bool(String field) {
            byte b = all.get(ValueLayout.JAVA_BYTE, take(1, field));
            if (b != 0 && b != 1) {
                throw error(field, "bool value " + b + " is neither 0 nor 1");
            }
            return b == 1;
        }

        private GgufValue.Array array(String field, int depth) {
            if (depth >= MAX_ARRAY_DEPTH) {
                throw error(field, "arrays nested deeper than " + MAX_ARRAY_DEPTH);
            }
            GgufType elementType = valueType(field + " element type");
            long n = count(field + " array length", elementType.minEncodedSize());
            if (n > Integer.MAX_VALUE - 8) {
                throw error(field, "array length " + n + " is too large");
            }
            List<Object> items = new ArrayList<>((int) Math.min(n, 1 << 16));
            for (long i = 0; i < n; i++) {
                items.add(value(elementType, field + "[" + i + "]", depth + 1).value());
            }
            return new GgufValue.Array(elementType, items);
        }
    }
}
