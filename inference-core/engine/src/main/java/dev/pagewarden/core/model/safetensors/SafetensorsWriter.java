package dev.pagewarden.core.model.safetensors;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.pagewarden.core.model.ChannelSink;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ModelFormatException;
import dev.pagewarden.core.model.RowSource;
import dev.pagewarden.core.model.gguf.RowEncoder;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.LongConsumer;

/**
 * Writes a safetensors file in the layout {@link SafetensorsReader} reads: the header length, the JSON
 * header (each tensor's dtype, shape and data_offsets, padded with spaces to 8 bytes) and the tensors'
 * little-endian data back to back. Tensors stream row by row from their {@link RowSource}s.
 */
public final class SafetensorsWriter {
    /** The element types safetensors files hold here (and that the reader reads). */
    public static final Set<DType> TYPES = Set.of(DType.F32, DType.F16, DType.BF16);

    private record Pending(String name, DType type, List<Long> shape, int rows, int cols, RowSource source) {
        long byteSize() {
            return type.bytesFor((long) rows * cols);
        }
    }

    private final List<Pending> tensors = new ArrayList<>();
    private final Set<String> names = new LinkedHashSet<>();

    /** Refuses a type safetensors does not hold here, with the ones it does. */
    public static void requireType(DType type) {
        if (!TYPES.contains(type)) {
            throw new ModelFormatException("safetensors holds f32, f16 or bf16 weights, not "
                    + type.name().toLowerCase(Locale.ROOT) + " (write quantised models as GGUF)");
        }
    }

    /** A matrix of {@code rows x cols} (shape [rows, cols]). */
    public SafetensorsWriter addMatrix(String name, DType type, int rows, int cols, RowSource source) {
        return add(new Pending(name, type, List.of((long) rows, (long) cols), rows, cols, source));
    }

    /** A vector of {@code length} values (shape [length]); its source is asked for row 0. */
    public SafetensorsWriter addVector(String name, DType type, int length, RowSource source) {
        return add(new Pending(name, type, List.of((long) length), 1, length, source));
    }

    private SafetensorsWriter add(Pending t) {
        requireType(t.type);
        if (t.rows <= 0 || t.cols <= 0) {
            throw new IllegalArgumentException("tensor " + t.name + ": bad shape " + t.shape);
        }
        if (!names.add(t.name)) {
            throw new IllegalArgumentException("tensor " + t.name + " added twice");
        }
        tensors.add(t);
        return this;
    }

    /** Size of the file {@link #write} will produce. */
    public long fileSize() {
        long size = 8 + header().length;
        for (Pending t : tensors) {
            size += t.byteSize();
        }
        return size;
    }

    /** Writes the file; {@code progress} hears the running byte count. A failed write leaves no file. */
    public void write(Path out, LongConsumer progress) throws IOException {
        int maxRowBytes = 0;
        for (Pending t : tensors) {
            maxRowBytes = (int) Math.max(maxRowBytes, t.type.bytesFor(t.cols));
        }
        try (ChannelSink sink = new ChannelSink(out, maxRowBytes, progress)) {
            byte[] header = header();
            sink.room(8);
            sink.buffer().putLong(header.length);
            sink.bytes(header);
            for (Pending t : tensors) {
                float[] row = new float[t.cols];
                for (int r = 0; r < t.rows; r++) {
                    t.source.fill(r, row);
                    sink.room(t.type.bytesFor(t.cols));
                    RowEncoder.encode(t.type, row, sink.buffer());
                }
            }
            sink.commit();
        }
    }

    /** The JSON header padded with spaces to a multiple of 8 bytes, so the data starts aligned. */
    private byte[] header() {
        ObjectNode h = new ObjectMapper().createObjectNode();
        h.putObject("__metadata__").put("format", "pt");
        long offset = 0;
        for (Pending t : tensors) {
            ObjectNode e = h.putObject(t.name);
            e.put("dtype", t.type.name());
            ArrayNode shape = e.putArray("shape");
            t.shape.forEach(shape::add);
            e.putArray("data_offsets").add(offset).add(offset + t.byteSize());
            offset += t.byteSize();
        }
        String json = h.toString();
        int length = json.getBytes(StandardCharsets.UTF_8).length;
        return (json + " ".repeat((8 - length % 8) % 8)).getBytes(StandardCharsets.UTF_8);
    }
}
