package dev.pagewarden.core.model.gguf;

import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.core.model.write.ModelShape;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.ModelFormatException;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.testing.TestModels;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Broken and lying GGUF files fail with a ModelFormatException that names the file and the field. */
class GgufBadInputTest {
    @TempDir
    Path dir;

    private AbstractThrowableAssert<?, ? extends Throwable> readFails(RawGguf raw) throws Exception {
        Path file = raw.writeTo(dir.resolve("bad.gguf"));
        return assertThatThrownBy(() -> {
            try (Arena arena = Arena.ofConfined()) {
                GgufReader.read(file, arena);
            }
        }).isInstanceOf(ModelFormatException.class).hasMessageContaining(file.toString());
    }

    @Test
    void wrongMagicAndVersions() throws Exception {
        readFails(new RawGguf().put("GGUX".getBytes()).u32(3).u64(0).u64(0)).hasMessageContaining("not a GGUF file");
        readFails(RawGguf.header(1, 0, 0)).hasMessageContaining("version 1 is not supported");
        readFails(RawGguf.header(4, 0, 0)).hasMessageContaining("unsupported GGUF version 4");
        readFails(RawGguf.header(Integer.reverseBytes(3), 0, 0)).hasMessageContaining("big-endian");
    }

    @Test
    void validMinimalFileReads() throws Exception {
        Path file = RawGguf.header(2, 1, 1).kvU32("general.alignment", 32)
                .tensor("t", new long[] {8, 2}, 0, 0).alignedData(64).writeTo(dir.resolve("ok.gguf"));
        try (Arena arena = Arena.ofConfined()) {
            GgufFile f = GgufReader.read(file, arena);
            assertThat(f.version()).isEqualTo(2);
            assertThat(f.tensors()).singleElement().satisfies(t -> {
                assertThat(t.dims()).containsExactly(8L, 2L);
                assertThat(t.type()).isEqualTo(DType.F32);
                assertThat(t.byteSize()).isEqualTo(64);
            });
            assertThat(f.integer("general.alignment", 0, 64)).isEqualTo(32);
        }
    }

    @Test
    void lyingCountsAndLengths() throws Exception {
        readFails(RawGguf.header(3, 1L << 60, 0)).hasMessageContaining("tensor_count").hasMessageContaining("impossible");
        readFails(RawGguf.header(3, 0, -1L)).hasMessageContaining("metadata_kv_count");
        readFails(RawGguf.header(3, 0, 1).u64(1L << 40).put(new byte[16]))
                .hasMessageContaining("metadata key #0").hasMessageContaining("string length 1099511627776");
        readFails(RawGguf.header(3, 0, 1).str("tokenizer.ggml.tokens").u32(GgufType.ARRAY.ordinal())
                .u32(GgufType.STRING.ordinal()).u64(1L << 50))
                .hasMessageContaining("tokenizer.ggml.tokens array length").hasMessageContaining("impossible");
        readFails(RawGguf.header(3, 0, 1).str("k").u32(77).u32(0)).hasMessageContaining("unknown metadata value type 77");
        readFails(RawGguf.header(3, 0, 1).str("general.alignment").u32(GgufType.UINT32.ordinal()).u32(3))
                .hasMessageContaining("general.alignment").hasMessageContaining("power of two");
    }

    @Test
    void lyingTensorEntries() throws Exception {
        readFails(RawGguf.header(3, 1, 0).tensor("w", new long[] {1L << 40, 1}, 0, 0).alignedData(0))
                .hasMessageContaining("tensor w").hasMessageContaining("ne[0] = 1099511627776");
        readFails(RawGguf.header(3, 1, 0).tensor("w", new long[] {1L << 30, 1L << 30, 1L << 30, 1L << 30}, 0, 0))
                .hasMessageContaining("tensor w").hasMessageContaining("overflow");
        readFails(RawGguf.header(3, 1, 0).str("w").u32(9).put(new byte[64]))
                .hasMessageContaining("tensor w").hasMessageContaining("n_dims 9");
        readFails(RawGguf.header(3, 1, 0).tensor("w", new long[] {1024, 1024}, 0, 0).alignedData(64))
                .hasMessageContaining("tensor w").hasMessageContaining("beyond the end of the file");
        readFails(RawGguf.header(3, 1, 0).tensor("w", new long[] {8}, 0, 1L << 62).alignedData(64))
                .hasMessageContaining("beyond the end of the file");
        readFails(RawGguf.header(3, 1, 0).tensor("w", new long[] {8}, 0, 4).alignedData(64))
                .hasMessageContaining("tensor w").hasMessageContaining("alignment 32");
        readFails(RawGguf.header(3, 2, 0).tensor("a", new long[] {16}, 0, 0).tensor("b", new long[] {8}, 0, 32)
                .alignedData(96)).hasMessageContaining("overlaps tensor a");
        readFails(RawGguf.header(3, 2, 0).tensor("a", new long[] {8}, 0, 0).tensor("a", new long[] {8}, 0, 32)
                .alignedData(64)).hasMessageContaining("duplicate tensor name");
        readFails(RawGguf.header(3, 1, 0).tensor("q", new long[] {48, 2}, 8, 0).alignedData(128))
                .hasMessageContaining("not a multiple of the Q8_0 block size 32");
        readFails(RawGguf.header(3, 1, 0).tensor("k", new long[] {128, 2}, 14, 0).alignedData(512))
                .hasMessageContaining("tensor k").hasMessageContaining("not a multiple of the Q6_K block size 256");
    }

    @Test
    void unsupportedTensorTypeIsNamed() throws Exception {
        readFails(RawGguf.header(3, 1, 0).tensor("blk.0.attn_q.weight", new long[] {256, 4}, 11, 0).alignedData(1024))
                .hasMessageContaining("tensor blk.0.attn_q.weight: unsupported GGUF tensor type 11 (Q3_K); "
                        + "supported: F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K");
    }

    @Test
    void everyTruncationOfAValidFileFailsCleanly() throws Exception {
        Path full = dir.resolve("full.gguf");
        ModelConfig cfg = ModelShape.parse("dim=32,hidden=64,layers=1,heads=4,kv_heads=2,vocab=300,seq=16").config();
        ModelGenerator.generate(cfg, DType.Q8_0, ModelGenerator.FileFormat.GGUF, 1, full, total -> done -> { });
        byte[] bytes = Files.readAllBytes(full);
        Path cut = dir.resolve("cut.gguf");
        int checked = 0;
        for (int len = 0; len < bytes.length; len += len < 2048 ? 1 : 61) {
            Files.write(cut, Arrays.copyOf(bytes, len));
            assertThatThrownBy(() -> ModelLoader.load(cut, null).close())
                    .as("cut at %d", len).isInstanceOf(ModelFormatException.class).hasMessageContaining(cut.toString());
            checked++;
        }
        assertThat(checked).isGreaterThan(2048);
        try (LoadedModel m = ModelLoader.load(full, null)) {
            assertThat(m.config()).isEqualTo(cfg);
        }
    }

    @Test
    void inconsistentLlamaMetadata() throws Exception {
        ModelConfig cfg = ModelShape.parse("dim=32,hidden=64,layers=1,heads=4,kv_heads=2,vocab=300,seq=16").config();
        assertLlamaFails(llamaKeys(cfg, 5, "llama"), cfg, "not a multiple of n_heads 5");
        assertLlamaFails(llamaKeys(cfg, 4, "gpt2"), cfg, "general.architecture is 'gpt2'");
        GgufWriter missingKey = new GgufWriter().put("general.architecture", GgufValue.string("llama"));
        assertLlamaFails(missingKey, cfg, "missing metadata llama.attention.head_count");
        GgufWriter wrongType = new GgufWriter().put("general.architecture", GgufValue.string("llama"))
                .put("llama.attention.head_count", GgufValue.string("four"));
        assertLlamaFails(wrongType, cfg, "llama.attention.head_count should be an integer");
        // a full model whose attn_q is stored with swapped dimensions
        GgufWriter swapped = llamaKeys(cfg, 4, "llama");
        swapped.addMatrix("token_embd.weight", DType.F32, cfg.vocabSize(), cfg.dim(), (r, d) -> { });
        swapped.addVector("blk.0.attn_norm.weight", DType.F32, cfg.dim(), (r, d) -> { });
        swapped.addMatrix("blk.0.attn_q.weight", DType.F32, cfg.dim() / 2, cfg.dim() * 2, (r, d) -> { });
        assertLlamaFails(swapped, null, "tensor blk.0.attn_q.weight: GGUF shape [64, 16] does not match");
        GgufWriter missing = llamaKeys(cfg, 4, "llama");
        missing.addMatrix("token_embd.weight", DType.F32, cfg.vocabSize(), cfg.dim(), (r, d) -> { });
        assertLlamaFails(missing, null, "missing tensor blk.0.attn_norm.weight");
    }

    private static GgufWriter llamaKeys(ModelConfig cfg, int heads, String arch) {
        return new GgufWriter()
                .put("general.architecture", GgufValue.string(arch))
                .put("llama.context_length", GgufValue.uint32(cfg.seqLen()))
                .put("llama.embedding_length", GgufValue.uint32(cfg.dim()))
                .put("llama.block_count", GgufValue.uint32(cfg.nLayers()))
                .put("llama.feed_forward_length", GgufValue.uint32(cfg.hiddenDim()))
                .put("llama.attention.head_count", GgufValue.uint32(heads));
    }

    /** Writes {@code w} (plus a token embedding when {@code cfg} is given) and expects loading to fail. */
    private void assertLlamaFails(GgufWriter w, ModelConfig cfg, String message) throws Exception {
        if (cfg != null) {
            w.addMatrix("token_embd.weight", DType.F32, cfg.vocabSize(), cfg.dim(), (r, d) -> { });
        }
        Path file = dir.resolve("llama.gguf");
        w.write(file, done -> { });
        assertThatThrownBy(() -> ModelLoader.load(file, null))
                .isInstanceOf(ModelFormatException.class).hasMessageContaining(file.toString())
                .hasMessageContaining(message);
    }

    @Test
    void tokenizerWithWrongVocabularySizeIsRejected() throws Exception {
        ModelConfig cfg = ModelShape.parse("dim=32,hidden=64,layers=1,heads=4,kv_heads=2,vocab=300,seq=16").config();
        Path tok512 = TestModels.tok512();
        // (a Hugging Face folder takes no tokenizer file at all)
        for (ModelGenerator.FileFormat format : List.of(ModelGenerator.FileFormat.BIN, ModelGenerator.FileFormat.GGUF)) {
            Path model = dir.resolve("m300." + format);
            ModelGenerator.generate(cfg, DType.F32, format, 1, model, total -> done -> { });
            assertThatThrownBy(() -> ModelLoader.load(model, tok512))
                    .isInstanceOf(ModelFormatException.class)
                    .hasMessageContaining(tok512.toString())
                    .hasMessageContaining("512 tokens").hasMessageContaining("vocab_size 300");
        }
    }

    @Test
    void garbageAndEmptyFilesFail() throws Exception {
        Path tokenizer = dir.resolve("never-read.bin");   // the model fails before the tokenizer is opened
        Path empty = Files.write(dir.resolve("empty.bin"), new byte[0]);
        assertThatThrownBy(() -> ModelLoader.load(empty, tokenizer))
                .isInstanceOf(ModelFormatException.class).hasMessageContaining("truncated");
        byte[] junk = new byte[4096];
        new java.util.Random(1).nextBytes(junk);
        Path garbage = Files.write(dir.resolve("junk.bin"), junk);
        assertThatThrownBy(() -> ModelLoader.load(garbage, tokenizer))
                .isInstanceOf(ModelFormatException.class).hasMessageContaining(garbage.toString());
    }
}
