package dev.pagewarden.core.model.gguf;

import dev.pagewarden.core.model.ChannelSink;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.RowSource;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongConsumer;
import java.util.stream.IntStream;

/**
 * Writes GGUF v3 files. Metadata and tensor entries are declared first (the header needs every
 * tensor's offset); then {@link #write} streams each tensor row by row from its {@link RowSource}
 * through a small buffer, so no model ever sits whole on the heap. Output is a pure function of what
 * was declared: the same inputs give byte-identical files.
 */
public final class GgufWriter {
    /** Rows are encoded in parallel in chunks of about this many bytes. */
    private static final int CHUNK_BYTES = 4 << 20;

    private record Pending(String name, DType type, int rows, int cols, boolean vector, RowSource source) {
        long byteSize() {
            return type.bytesFor((long) rows * cols);
        }
    }

    private final Map<String, GgufValue> metadata = new LinkedHashMap<>();
    private final List<Pending> tensors = new ArrayList<>();
    private int alignment = GgufReader.DEFAULT_ALIGNMENT;

    /** Adds a metadata pair; {@code general.alignment} (a power of two) also sets the data alignment. */
    public GgufWriter put(String key, GgufValue value) {
        if (metadata.containsKey(key)) {
            throw new IllegalArgumentException("metadata key " + key + " given twice");
        }
        if (key.equals("general.alignment")) {
            Long a = value.asLong();
            if (value.type() != GgufType.UINT32 || a == null || a <= 0 || Long.bitCount(a) != 1) {
                throw new IllegalArgumentException("general.alignment must be a UINT32 power of two, got " + value);
            }
            alignment = a.intValue();
        }
        metadata.put(key, value);
        return this;
    }

    /** Adds a matrix of {@code rows x cols} (GGUF dims [cols, rows]). */
    public GgufWriter addMatrix(String name, DType type, int rows, int cols, RowSource source) {
        return add(new Pending(name, type, rows, cols, false, source));
    }

    /** Adds a 1-D tensor of {@code length} values (GGUF dims [length]); its source is asked for row 0. */
    public GgufWriter addVector(String name, DType type, int length, RowSource source) {
        return add(new Pending(name, type, 1, length, true, source));
    }

    private GgufWriter add(Pending t) {
        if (t.rows <= 0 || t.cols <= 0) {
            throw new IllegalArgumentException("tensor " + t.name + ": bad shape " + t.rows + "x" + t.cols);
        }
        if (t.cols % t.type.blockSize() != 0) {
            throw new IllegalArgumentException("tensor " + t.name + ": row length " + t.cols
                    + " is not a multiple of the " + t.type + " block size " + t.type.blockSize());
        }
        if (tensors.stream().anyMatch(p -> p.name.equals(t.name))) {
            throw new IllegalArgumentException("tensor " + t.name + " added twice");
        }
        tensors.add(t);
        return this;
    }

    /** Size of the file {@link #write} will produce. */
    public long fileSize() {
        long size = GgufReader.alignUp(header().length, alignment);
        for (Pending t : tensors) {
            size += GgufReader.alignUp(t.byteSize(), alignment);
        }
        return size;
    }

    /**
     * Writes the file; {@code progress} hears the running total of bytes written. A failed write
     * leaves no partial file behind.
     */
    public void write(Path out, LongConsumer progress) throws IOException {
        long maxRowBytes = 0;
        for (Pending t : tensors) {
            maxRowBytes = Math.max(maxRowBytes, t.type.bytesFor(t.cols));
        }
        try (ChannelSink sink = new ChannelSink(out, (int) maxRowBytes, progress)) {
            byte[] header = header();
            sink.bytes(header);
            sink.zeros(padding(header.length));
            for (Pending t : tensors) {
                int rowBytes = (int) t.type.bytesFor(t.cols);
                // rows are encoded independently, so a chunk of them is encoded on all cores and written
                // in row order: the file's bytes do not depend on the number of threads
                int chunkRows = Math.max(1, Math.min(t.rows, CHUNK_BYTES / Math.max(1, rowBytes)));
                byte[] chunk = new byte[chunkRows * rowBytes];
                for (int first = 0; first < t.rows; first += chunkRows) {
                    int start = first;
                    int n = Math.min(chunkRows, t.rows - first);
                    IntStream.range(0, n).parallel().forEach(i -> {
                        float[] row = new float[t.cols];
                        t.source.fill(start + i, row);
                        RowEncoder.encode(t.type, row,
                                ByteBuffer.wrap(chunk, i * rowBytes, rowBytes).slice().order(ByteOrder.LITTLE_ENDIAN));
                    });
                    sink.bytes(chunk, n * rowBytes);
                }
                sink.zeros(padding(t.byteSize()));
            }
            sink.commit();
        }
    }

    private long padding(long length) {
        return GgufReader.alignUp(length, alignment) - length;
    }

    /** Header: magic, version, counts, metadata, tensor entries (offsets relative to the data section). */
    private byte[] header() {
        Bytes h = new Bytes();
        h.u32(GgufReader.MAGIC);
        h.u32(3);
        h.u64(tensors.size());
        h.u64(metadata.size());
        metadata.forEach((key, value) -> {
            h.string(key);
            h.u32(value.type().id());
            h.value(value);
        });
        long offset = 0;
        for (Pending t : tensors) {
            h.string(t.name);
            if (t.vector) {
                h.u32(1);
                h.u64(t.cols);
            } else {
                h.u32(2);
                h.u64(t.cols);
                h.u64(t.rows);
            }
            h.u32(GgufReader.ggmlTypeId(t.type));
            h.u64(offset);
            offset += GgufReader.alignUp(t.byteSize(), alignment);
        }
        return h.toByteArray();
    }

    /** Little-endian header bytes. */
    private static final class Bytes extends ByteArrayOutputStream {
        private final ByteBuffer scratch = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);

        void u32(long v) {
            scratch.clear();
            scratch.putInt((int) v);
            write(scratch.array(), 0, 4);
        }

        void u64(long v) {
            scratch.clear();
            scratch.putLong(v);
            write(scratch.array(), 0, 8);
        }

        void string(String s) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            u64(b.length);
            write(b, 0, b.length);
        }

        void value(GgufValue v) {
            scalarOrArray(v.type(), v.value());
        }

        private void scalarOrArray(GgufType type, Object v) {
            switch (type) {
                case UINT8, INT8 -> write((Integer) v);
                case UINT16, INT16 -> {
                    int s = (Integer) v;
                    write(s & 0xFF);
                    write((s >>> 8) & 0xFF);
                }
                case UINT32 -> u32((Long) v);
                case INT32 -> u32((Integer) v);
                case UINT64, INT64 -> u64((Long) v);
                case FLOAT32 -> u32(Float.floatToRawIntBits((Float) v));
                case FLOAT64 -> u64(Double.doubleToRawLongBits((Double) v));
                case BOOL -> write((Boolean) v ? 1 : 0);
                case STRING -> string((String) v);
                case ARRAY -> {
                    GgufValue.Array a = (GgufValue.Array) v;
                    u32(a.elementType().id());
                    u64(a.items().size());
                    for (Object item : a.items()) {
                        scalarOrArray(a.elementType(), item);
                    }
                }
            }
        }
    }
}
