package dev.pagewarden.core.model.gguf;

import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.core.model.write.ModelShape;
import dev.pagewarden.core.model.Architecture;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.LlamaTensors;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.ModelFormatException;
import dev.pagewarden.core.model.RopeScaling;
import dev.pagewarden.core.model.load.ModelLoader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The GGUF side of the architectures, in llama.cpp's names: keys under the architecture's prefix,
 * {@code blk.N.attn_q.bias} (qwen2), {@code blk.N.attn_q_norm.weight} (qwen3), {@code attention.key_length}
 * for a head size other than dim / heads, {@code rope_freqs.weight} (Llama 3), no {@code output.weight}
 * for a tied classifier; and the files the loader refuses, each naming why.
 */
class ArchitectureGgufTest {
    static final String SHAPE = "dim=64,hidden=128,layers=2,heads=4,kv_heads=2,vocab=300,seq=64";

    @TempDir
    Path dir;

    private Path generate(String arch, String shape, String ropeScaling) throws Exception {
        ModelConfig cfg = ModelShape.parse(shape).forArchitecture(arch, ropeScaling).config();
        Path file = dir.resolve(arch + ".gguf");
        ModelGenerator.generate(cfg, DType.Q8_0, ModelGenerator.FileFormat.GGUF, 3, file, size -> done -> { });
        return file;
    }

    private static GgufFile read(Path file, Arena arena) {
        return GgufReader.read(file, arena);
    }

    @Test
    void qwen2HasQkvBiasesInF32AndNeitherNormsNorRopeFactors() throws Exception {
        try (Arena arena = Arena.ofConfined()) {
            GgufFile f = read(generate("qwen2", SHAPE, null), arena);
            assertThat(f.string("general.architecture")).isEqualTo("qwen2");
            assertThat(f.integer("qwen2.attention.head_count_kv", 0, 100)).isEqualTo(2);
            for (String t : List.of("blk.1.attn_q.bias", "blk.1.attn_k.bias", "blk.1.attn_v.bias")) {
                assertThat(f.tensor(t)).as(t).hasValueSatisfying(i -> assertThat(i.type()).isEqualTo(DType.F32));
            }
            assertThat(f.tensor("blk.1.attn_k.bias").orElseThrow().dims()).containsExactly(32L);
            assertThat(f.tensor("blk.0.attn_q_norm.weight")).isEmpty();
            assertThat(f.tensor("rope_freqs.weight")).isEmpty();
            assertThat(f.tensor("output.weight")).as("tied classifier").isEmpty();
            assertThat(f.get("qwen2.attention.key_length")).isEmpty();
        }
    }

    @Test
    void qwen3HasPerHeadNormsAndItsOwnHeadSize() throws Exception {
        try (Arena arena = Arena.ofConfined()) {
            GgufFile f = read(generate("qwen3", SHAPE + ",head_dim=32,shared=false", null), arena);
            assertThat(f.string("general.architecture")).isEqualTo("qwen3");
            assertThat(f.integer("qwen3.attention.key_length", 0, 1000)).isEqualTo(32);
            assertThat(f.integer("qwen3.attention.value_length", 0, 1000)).isEqualTo(32);
            assertThat(f.integer("qwen3.rope.dimension_count", 0, 1000)).isEqualTo(32);
            assertThat(f.tensor("blk.0.attn_q_norm.weight").orElseThrow().dims()).containsExactly(32L);
            assertThat(f.tensor("blk.0.attn_k_norm.weight").orElseThrow().dims()).containsExactly(32L);
            assertThat(f.tensor("blk.0.attn_q.weight").orElseThrow().dims()).containsExactly(64L, 128L);
            assertThat(f.tensor("blk.0.attn_output.weight").orElseThrow().dims()).containsExactly(128L, 64L);
            assertThat(f.tensor("blk.0.attn_q.bias")).isEmpty();
            assertThat(f.tensor("output.weight")).isPresent();
        }
        ModelConfig read = ModelLoader.load(dir.resolve("qwen3.gguf"), null).config();
        assertThat(read.architecture()).isEqualTo(Architecture.QWEN3);
        assertThat(read.headSize()).isEqualTo(32);
        assertThat(read.qDim()).isEqualTo(128);
    }

    @Test
    void llama3ScalingIsStoredAsRopeFreqsAndReadBack() throws Exception {
        Path file = generate("llama", SHAPE, "llama3");
        try (Arena arena = Arena.ofConfined()) {
            GgufFile f = read(file, arena);
            assertThat(f.string("general.architecture")).isEqualTo("llama");
            assertThat(f.number("llama.rope.freq_base")).isEqualTo(500000.0);
            assertThat(f.get("llama.rope.scaling.type")).as("llama.cpp has no llama3 scaling type").isEmpty();
            GgufTensorInfo freqs = f.tensor("rope_freqs.weight").orElseThrow();
            assertThat(freqs.type()).isEqualTo(DType.F32);
            assertThat(freqs.dims()).containsExactly(8L);
        }
        ModelConfig cfg = ModelLoader.load(file, null).config();
        assertThat(cfg.ropeScaling()).isEqualTo(RopeScaling.llama32(16, 500000));
    }

    @Test
    void mistralIsWrittenAsLlama() throws Exception {
        try (Arena arena = Arena.ofConfined()) {
            GgufFile f = read(generate("mistral", SHAPE, null), arena);
            assertThat(f.string("general.architecture")).isEqualTo("llama");
            assertThat(f.number("llama.rope.freq_base")).isEqualTo(1e6);
        }
    }

    /** Metadata of {@code cfg}'s shape under {@code arch}'s prefix, and the tensors of {@code tensors}. */
    private static GgufWriter file(String arch, ModelConfig cfg, ModelConfig tensors) {
        String p = arch + ".";
        GgufWriter w = new GgufWriter()
                .put("general.architecture", GgufValue.string(arch))
                .put(p + "context_length", GgufValue.uint32(cfg.seqLen()))
                .put(p + "embedding_length", GgufValue.uint32(cfg.dim()))
                .put(p + "block_count", GgufValue.uint32(cfg.nLayers()))
                .put(p + "feed_forward_length", GgufValue.uint32(cfg.hiddenDim()))
                .put(p + "attention.head_count", GgufValue.uint32(cfg.nHeads()))
                .put(p + "attention.head_count_kv", GgufValue.uint32(cfg.nKvHeads()));
        for (LlamaTensors.Slot s : LlamaTensors.ggufOrder(tensors)) {
            if (s.role().isVector()) {
                w.addVector(s.ggufName(), DType.F32, s.cols(), (r, d) -> java.util.Arrays.fill(d, 1f));
            } else {
                w.addMatrix(s.ggufName(), DType.F32, s.rows(), s.cols(), (r, d) -> { });
            }
        }
        return w;
    }

    private void refused(GgufWriter w, String... message) throws Exception {
        Path file = dir.resolve("bad.gguf");
        w.write(file, done -> { });
        var thrown = assertThatThrownBy(() -> ModelLoader.load(file, null))
                .isInstanceOf(ModelFormatException.class).hasMessageContaining(file.toString());
        for (String m : message) {
            thrown.hasMessageContaining(m);
        }
    }

    @Test
    void unknownArchitecturesAndUnsupportedVariantsAreRefusedByName() throws Exception {
        ModelConfig llama = ModelShape.parse(SHAPE).config();
        ModelConfig qwen2 = llama.with(Architecture.QWEN2, 16, null);
        ModelConfig qwen3 = llama.with(Architecture.QWEN3, 16, null);
        refused(file("phi3", llama, llama), "general.architecture is 'phi3'", "supported: llama, qwen2, qwen3");
        refused(file("qwen2", llama, llama), "missing tensor blk.0.attn_q.bias");
        refused(file("qwen3", llama, llama), "missing tensor blk.0.attn_q_norm.weight");
        refused(file("llama", llama, llama).put("llama.rope.scaling.type", GgufValue.string("yarn")),
                "llama.rope.scaling.type 'yarn' is not supported");
        refused(file("qwen3", llama, qwen3).put("qwen3.attention.key_length", GgufValue.uint32(16))
                .put("qwen3.attention.value_length", GgufValue.uint32(8)), "qwen3.attention.value_length 8 differs");
        refused(file("qwen2", llama, qwen2).addVector("rope_freqs.weight", DType.F32, 8, (r, d) -> java.util.Arrays.fill(d, 2f)),
                "rope_freqs.weight is only supported for llama, not qwen2");
        refused(file("llama", llama, llama).addVector("rope_freqs.weight", DType.F32, 8, (r, d) -> java.util.Arrays.fill(d, -1f)),
                "rope frequency factor 0 = -1.0 is not a positive number");
        refused(file("llama", llama, llama).addVector("rope_freqs.weight", DType.F32, 6, (r, d) -> { }),
                "tensor rope_freqs.weight: GGUF shape [6] does not match");
        refused(file("qwen3", llama, llama.with(Architecture.QWEN3, 32, null)), "blk.0.attn_q.weight");
        refused(file("llama", llama, qwen2), "tensor blk.0.attn_q.bias is not part of a llama model");
        refused(file("qwen2", llama, qwen3.with(Architecture.QWEN3, 16, null)).addVector("blk.0.attn_q.bias", DType.F32, 64,
                (r, d) -> { }).addVector("blk.0.attn_k.bias", DType.F32, 32, (r, d) -> { })
                .addVector("blk.0.attn_v.bias", DType.F32, 32, (r, d) -> { }).addVector("blk.1.attn_v.bias", DType.F32, 32, (r, d) -> { })
                .addVector("blk.1.attn_q.bias", DType.F32, 64, (r, d) -> { }).addVector("blk.1.attn_k.bias", DType.F32, 32, (r, d) -> { }),
                "tensor blk.0.attn_q_norm.weight is not part of a qwen2 model");
    }
}
