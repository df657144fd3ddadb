package dev.pagewarden.core.model.safetensors;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A safetensors writer written from the format's description (8-byte little-endian header length, JSON
 * header of dtype / shape / data_offsets, header padded with spaces to 8 bytes, little-endian data), apart
 * from the production reader and writer it checks: the folders the reader's tests load and the bytes the
 * writer must produce come from here.
 */
final class SafetensorsTestWriter {
    record Entry(String dtype, List<Long> shape, float[] values) {
    }

    private final Map<String, Entry> entries = new LinkedHashMap<>();

    SafetensorsTestWriter add(String name, String dtype, List<Long> shape, float[] values) {
        entries.put(name, new Entry(dtype, shape, values));
        return this;
    }

    void write(Path file) throws IOException {
        ObjectMapper json = new ObjectMapper();
        ObjectNode header = json.createObjectNode();
        header.putObject("__metadata__").put("format", "pt");
        long offset = 0;
        for (var e : entries.entrySet()) {
            long bytes = (long) e.getValue().values.length * width(e.getValue().dtype);
            ObjectNode t = header.putObject(e.getKey());
            t.put("dtype", e.getValue().dtype);
            var shape = t.putArray("shape");
            e.getValue().shape.forEach(shape::add);
            t.putArray("data_offsets").add(offset).add(offset + bytes);
            offset += bytes;
        }
        byte[] h = json.writeValueAsString(header).getBytes(StandardCharsets.UTF_8);
        int padded = (h.length + 7) / 8 * 8;
        ByteBuffer out = ByteBuffer.allocate((int) (8 + padded + offset)).order(ByteOrder.LITTLE_ENDIAN);
        out.putLong(padded);
        out.put(h);
        for (int i = h.length; i < padded; i++) {
            out.put((byte) ' ');
        }
        for (Entry e : entries.values()) {
            for (float v : e.values) {
                switch (e.dtype) {
                    case "F32" -> out.putFloat(v);
                    case "F16" -> out.putShort(Float.floatToFloat16(v));
                    case "BF16" -> out.putShort((short) (Float.floatToRawIntBits(v) >>> 16));
                    default -> throw new IllegalArgumentException(e.dtype);
                }
            }
        }
        Files.write(file, out.array());
    }

    static int width(String dtype) {
        return dtype.equals("F32") ? 4 : 2;
    }
}
