package dev.pagewarden.core.model.safetensors;

import dev.pagewarden.core.model.ModelFormatException;
import dev.pagewarden.core.model.load.ModelLoader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Every malformed file or folder is refused with a {@link ModelFormatException} naming the file and what is wrong. */
class SafetensorsBadInputTest {
    @TempDir
    Path dir;

    private Path raw(String name, String header, int dataBytes) throws IOException {
        byte[] h = header.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(8 + h.length + dataBytes).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(h.length).put(h);
        Path f = dir.resolve(name);
        Files.write(f, b.array());
        return f;
    }

    private static void refused(Path file, String... parts) {
        try (Arena arena = Arena.ofConfined()) {
            assertThatThrownBy(() -> SafetensorsReader.read(file, arena))
                    .isInstanceOf(ModelFormatException.class)
                    .hasMessageContaining(file.toString())
                    .hasMessageContainingAll(parts);
        }
    }

    @Test
    void readsAWellFormedFile() throws IOException {
        Path f = dir.resolve("ok.safetensors");
        new SafetensorsTestWriter().add("a", "F32", List.of(2L, 3L), new float[]{1, 2, 3, 4, 5, 6})
                .add("b", "BF16", List.of(2L), new float[]{1.5f, -2f}).write(f);
        try (Arena arena = Arena.ofConfined()) {
            var t = SafetensorsReader.read(f, arena);
            assertThat(t.keySet()).containsExactly("a", "b");
            assertThat(t.get("a").shape()).containsExactly(2L, 3L);
            assertThat(t.get("a").data().byteSize()).isEqualTo(24);
            assertThat(t.get("b").data().byteSize()).isEqualTo(4);
        }
    }

    @Test
    void malformedFiles() throws IOException {
        Path tiny = dir.resolve("tiny.safetensors");
        Files.write(tiny, new byte[]{1, 2, 3});
        refused(tiny, "too short");

        Path longHeader = dir.resolve("long.safetensors");
        Files.write(longHeader, ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putLong(1000).array());
        refused(longHeader, "header length 1000");

        refused(raw("notjson.safetensors", "{nope", 0), "not JSON");
        refused(raw("int8.safetensors", "{\"w\":{\"dtype\":\"I8\",\"shape\":[4],\"data_offsets\":[0,4]}}", 4),
                "tensor w", "dtype 'I8' is not supported");
        refused(raw("outside.safetensors", "{\"w\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 8),
                "tensor w", "lie outside the 8 data bytes");
        refused(raw("size.safetensors", "{\"w\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,16]}}", 16),
                "tensor w", "16 data bytes", "needs 12");
        refused(raw("shape.safetensors", "{\"w\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,0]}}", 0),
                "tensor w", "bad shape");
    }

    private TinyHfModel model(String type) {
        return TinyHfModel.random(HfFolderTest.config(type), type, "F32", 1);
    }

    private static void folderRefused(Path folder, String... parts) {
        assertThatThrownBy(() -> ModelLoader.load(folder, null).close())
                .isInstanceOf(ModelFormatException.class)
                .hasMessageContainingAll(parts);
    }

    @Test
    void badConfig() throws IOException {
        Path f = model("llama").writeFolder(dir.resolve("gemma"), 1);
        Files.writeString(f.resolve("config.json"), Files.readString(f.resolve("config.json"))
                .replace("\"model_type\" : \"llama\"", "\"model_type\" : \"gemma\""));
        folderRefused(f, "config.json", "model_type 'gemma'", "supported: llama, mistral, qwen2, qwen3");

        Path g = model("llama").writeFolder(dir.resolve("nohidden"), 1);
        Files.writeString(g.resolve("config.json"), Files.readString(g.resolve("config.json"))
                .replace("\"hidden_size\"", "\"hidden_width\""));
        folderRefused(g, "config.json", "missing hidden_size");

        Path y = model("llama").writeFolder(dir.resolve("yarn"), 1);
        Files.writeString(y.resolve("config.json"), Files.readString(y.resolve("config.json"))
                .replace("\"llama3\"", "\"yarn\""));
        folderRefused(y, "config.json", "rope_scaling type 'yarn'");

        Path empty = dir.resolve("empty");
        Files.createDirectories(empty);
        Files.writeString(empty.resolve("config.json"), "{}");
        folderRefused(empty, "config.json", "model_type ''");
    }

    @Test
    void badTensors() throws IOException {
        TinyHfModel missing = model("qwen3");
        missing.values.remove("model.layers.1.self_attn.k_norm.weight");
        missing.shapes.remove("model.layers.1.self_attn.k_norm.weight");
        folderRefused(missing.writeFolder(dir.resolve("missing"), 1), "missing tensor model.layers.1.self_attn.k_norm.weight");

        TinyHfModel extra = model("llama");
        extra.values.put("model.layers.0.self_attn.q_proj.bias", new float[64]);
        extra.shapes.put("model.layers.0.self_attn.q_proj.bias", List.of(64L));
        folderRefused(extra.writeFolder(dir.resolve("extra"), 1), "model.safetensors",
                "tensor model.layers.0.self_attn.q_proj.bias is not part of a llama model");

        TinyHfModel shape = model("llama");
        shape.shapes.put("model.layers.0.mlp.up_proj.weight", List.of(64L, 160L));
        folderRefused(shape.writeFolder(dir.resolve("shape"), 1), "model.safetensors",
                "tensor model.layers.0.mlp.up_proj.weight: shape [64, 160] does not match the expected [160, 64]");

        Path noWeights = dir.resolve("noweights");
        Files.createDirectories(noWeights);
        model("llama").writeConfig(noWeights);
        folderRefused(noWeights, "no model.safetensors");
    }

    @Test
    void badShards() throws IOException {
        Path gone = model("llama").writeFolder(dir.resolve("gone"), 2);
        Files.delete(gone.resolve("model-00002-of-00002.safetensors"));
        folderRefused(gone, "model.safetensors.index.json", "shard model-00002-of-00002.safetensors is missing");

        Path moved = model("llama").writeFolder(dir.resolve("moved"), 2);
        Path index = moved.resolve("model.safetensors.index.json");
        Files.writeString(index, Files.readString(index).replaceFirst(
                "(\"model.embed_tokens.weight\" : \")model-00001", "$1model-00002"));
        folderRefused(moved, "model-00001-of-00002.safetensors", "tensor model.embed_tokens.weight is not mapped to this shard");

        Path escape = model("llama").writeFolder(dir.resolve("escape"), 2);
        Path idx = escape.resolve("model.safetensors.index.json");
        Files.writeString(idx, Files.readString(idx).replace("model-00002-of-00002", "../gone/model-00001-of-00002"));
        folderRefused(escape, "is not a file of");
    }
}
