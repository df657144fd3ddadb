package dev.pagewarden.core.model.safetensors;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ModelFormatException;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Reads Hugging Face safetensors files: an 8-byte little-endian header length, a JSON header mapping
 * each tensor name to {@code dtype}, {@code shape} and {@code data_offsets} (relative to the end of the
 * header), then the raw little-endian data. The file is memory-mapped; tensors are views over it. The
 * header is untrusted: lengths and offsets are checked against the file before use.
 */
public final class SafetensorsReader {
    /** Index of a sharded checkpoint: {@code weight_map} maps each tensor to the shard holding it. */
    public static final String INDEX = "model.safetensors.index.json";
    public static final String SINGLE = "model.safetensors";
    /** A header larger than this is not a weight index but a corrupt or hostile file. */
    private static final long MAX_HEADER = 100L << 20;
    private static final ValueLayout.OfLong U64_LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private SafetensorsReader() {
    }

    /** All tensors of one file, in header order, mapped into {@code arena}. */
    public static Map<String, SafetensorsTensor> read(Path file, Arena arena) {
        MemorySegment all;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            all = ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena);
        } catch (IOException e) {
            throw new ModelFormatException(file + ": cannot read safetensors file: " + e.getMessage(), e);
        }
        return parse(file, all);
    }

    static Map<String, SafetensorsTensor> parse(Path file, MemorySegment all) {
        if (all.byteSize() < 8) {
            throw new ModelFormatException(file + ": too short for a safetensors header (" + all.byteSize() + " bytes)");
        }
        long headerLen = all.get(U64_LE, 0);
        if (headerLen < 2 || headerLen > MAX_HEADER || headerLen > all.byteSize() - 8) {
            throw new ModelFormatException(file + ": header length " + Long.toUnsignedString(headerLen)
                    + " does not fit the file of " + all.byteSize() + " bytes");
        }
        String json = new String(all.asSlice(8, headerLen).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8);
        JsonNode header;
        try {
            header = new ObjectMapper().readTree(json);
        } catch (IOException e) {
            throw new ModelFormatException(file + ": header is not JSON: " + e.getMessage(), e);
        }
        if (header == null || !header.isObject()) {
            throw new ModelFormatException(file + ": header is not a JSON object");
        }
        MemorySegment data = all.asSlice(8 + headerLen);
        Map<String, SafetensorsTensor> tensors = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = header.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getKey().equals("__metadata__")) {
                continue;
            }
            tensors.put(e.getKey(), tensor(file, e.getKey(), e.getValue(), data));
        }
        return tensors;
    }

    private static SafetensorsTensor tensor(Path file, String name, JsonNode info, MemorySegment data) {
        String where = file + ": tensor " + name;
        if (!info.isObject()) {
            throw new ModelFormatException(where + ": header entry is not an object");
        }
        String dtype = info.path("dtype").asText("");
        DType type = switch (dtype) {
            case "F32" -> DType.F32;
            case "F16" -> DType.F16;
            case "BF16" -> DType.BF16;
            default -> throw new ModelFormatException(where + ": dtype '" + dtype
                    + "' is not supported (supported: F32, F16, BF16)");
        };
        JsonNode shapeNode = info.path("shape");
        if (!shapeNode.isArray()) {
            throw new ModelFormatException(where + ": shape is missing or not a list");
        }
        List<Long> shape = new ArrayList<>();
        long elements = 1;
        for (JsonNode d : shapeNode) {
            if (!d.canConvertToLong() || !d.isIntegralNumber() || d.asLong() < 0) {
                throw new ModelFormatException(where + ": bad shape " + shapeNode);
            }
            shape.add(d.asLong());
            try {
                elements = Math.multiplyExact(elements, d.asLong());
            } catch (ArithmeticException ex) {
                throw new ModelFormatException(where + ": shape " + shapeNode + " is too large", ex);
            }
        }
        JsonNode offsets = info.path("data_offsets");
        if (!offsets.isArray() || offsets.size() != 2 || !offsets.get(0).isIntegralNumber()
                || !offsets.get(1).isIntegralNumber()) {
            throw new ModelFormatException(where + ": data_offsets should be [begin, end]");
        }
        long begin = offsets.get(0).asLong();
        long end = offsets.get(1).asLong();
        if (begin < 0 || end < begin || end > data.byteSize()) {
            throw new ModelFormatException(where + ": data_offsets [" + begin + ", " + end
                    + "] lie outside the " + data.byteSize() + " data bytes");
        }
        long need = type.bytesFor(elements);
        if (end - begin != need) {
            throw new ModelFormatException(where + ": " + (end - begin) + " data bytes for " + dtype + " " + shape
                    + ", which needs " + need);
        }
        return new SafetensorsTensor(file, name, type, shape, data.asSlice(begin, end - begin));
    }

    /**
     * All tensors of a Hugging Face folder: the shards {@code model.safetensors.index.json} names (each
     * tensor checked to sit in the shard its {@code weight_map} says), else {@code model.safetensors},
     * else every {@code *.safetensors} file. A tensor name found twice is refused.
     */
    public static Map<String, SafetensorsTensor> readFolder(Path dir, Arena arena) {
        Path index = dir.resolve(INDEX);
        Map<String, String> weightMap = null;
        List<Path> files = new ArrayList<>();
        if (Files.isRegularFile(index)) {
            weightMap = weightMap(index);
            for (String shard : new TreeSet<>(weightMap.values())) {
                Path p = dir.resolve(shard).normalize();
                if (!p.getParent().equals(dir.normalize())) {
                    throw new ModelFormatException(index + ": shard '" + shard + "' is not a file of " + dir);
                }
                if (!Files.isRegularFile(p)) {
                    throw new ModelFormatException(index + ": shard " + shard + " is missing from " + dir);
                }
                files.add(p);
            }
        } else if (Files.isRegularFile(dir.resolve(SINGLE))) {
            files.add(dir.resolve(SINGLE));
        } else {
            try (var list = Files.list(dir)) {
                list.filter(p -> p.getFileName().toString().endsWith(".safetensors")).sorted().forEach(files::add);
            } catch (IOException e) {
                throw new ModelFormatException(dir + ": cannot list: " + e.getMessage(), e);
            }
        }
        if (files.isEmpty()) {
            throw new ModelFormatException(dir + ": no " + SINGLE + ", " + INDEX + " or *.safetensors file");
        }
        Map<String, SafetensorsTensor> all = new LinkedHashMap<>();
        for (Path f : files) {
            for (SafetensorsTensor t : read(f, arena).values()) {
                SafetensorsTensor before = all.put(t.name(), t);
                if (before != null) {
                    throw new ModelFormatException(f + ": tensor " + t.name() + " is also in " + before.file());
                }
                if (weightMap != null && !f.getFileName().toString().equals(weightMap.get(t.name()))) {
                    throw new ModelFormatException(f + ": tensor " + t.name() + " is not mapped to this shard by "
                            + index + " (weight_map says " + weightMap.get(t.name()) + ")");
                }
            }
        }
        if (weightMap != null) {
            for (var e : weightMap.entrySet()) {
                if (!all.containsKey(e.getKey())) {
                    throw new ModelFormatException(dir.resolve(e.getValue()) + ": missing tensor " + e.getKey()
                            + " that " + index + " maps to it");
                }
            }
        }
        return all;
    }

    private static Map<String, String> weightMap(Path index) {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(index.toFile());
        } catch (IOException e) {
            throw new ModelFormatException(index + ": not valid JSON: " + e.getMessage(), e);
        }
        JsonNode map = root == null ? null : root.get("weight_map");
        if (map == null || !map.isObject()) {
            throw new ModelFormatException(index + ": no weight_map object");
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = map.fields(); it.hasNext(); ) {
            var e = it.next();
            if (!e.getValue().isTextual()) {
                throw new ModelFormatException(index + ": weight_map entry " + e.getKey() + " is not a file name");
            }
            out.put(e.getKey(), e.getValue().asText());
        }
        return out;
    }
}
