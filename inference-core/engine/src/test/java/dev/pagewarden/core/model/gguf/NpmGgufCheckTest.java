package dev.pagewarden.core.model.gguf;

import dev.pagewarden.core.testing.NpmChecks;

import dev.pagewarden.core.testing.MiniJson;
import dev.pagewarden.core.model.write.Converter;
import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.core.model.write.ModelShape;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.testing.TestModels;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reads files from our GGUF writer with an independent reader, the npm package {@code @huggingface/gguf}
 * (via {@code src/test/gguf-check/check.mjs}), and checks it sees the metadata and tensor entries we
 * wrote. Needs {@code npm ci} in that folder: without it the test fails on CI and is skipped elsewhere.
 */
class NpmGgufCheckTest {
    private static final Path CHECK_DIR = NpmChecks.dir("gguf-check");
    @TempDir
    Path dir;

    @BeforeAll
    static void requireNodeReader() {
        String missing = null;
        if (!Files.isDirectory(CHECK_DIR.resolve("node_modules").resolve("@huggingface").resolve("gguf"))) {
            missing = "node_modules missing in " + CHECK_DIR + " (run npm ci there)";
        } else if (!nodeRuns()) {
            missing = "node is not on the PATH";
        }
        if (missing != null) {
            if ("true".equals(System.getenv("CI"))) {
                Assertions.fail(missing);
            }
            System.out.println("skipping NpmGgufCheckTest: " + missing);
            Assumptions.abort(missing);
        }
    }

    private static boolean nodeRuns() {
        try {
            Process p = new ProcessBuilder("node", "--version").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (Exception e) {
            return false;
        }
    }

    @ParameterizedTest
    @EnumSource(DType.class)
    void generatedModel(DType dtype) throws Exception {
        ModelConfig cfg = ModelShape.parse("tiny-gqa").config();
        Path file = dir.resolve("gen-" + dtype + ".gguf");
        ModelGenerator.generate(cfg, dtype, ModelGenerator.FileFormat.GGUF, 11, file, total -> done -> { });
        Map<String, Object> npm = compareWithNpm(file);
        Map<String, Object> meta = metadata(npm);
        assertThat(value(meta, "llama.attention.head_count_kv")).isEqualTo(2.0);
        assertThat(value(meta, "llama.block_count")).isEqualTo(3.0);
        assertThat(value(meta, "general.file_type")).isEqualTo(switch (dtype) {
            case F32 -> 0.0;
            case F16 -> 1.0;
            case Q8_0 -> 7.0;
            case BF16 -> 32.0;
            case Q4_0 -> 2.0;
            case Q4_K -> 15.0;
            case Q5_K -> 17.0;
            case Q6_K -> 18.0;
        });
        @SuppressWarnings("unchecked")
        List<Object> tokens = (List<Object>) value(meta, "tokenizer.ggml.tokens");
        assertThat(tokens).hasSize(512).contains("<0x41>", "\u2581a").doesNotContain(" a");
    }

    @Test
    void convertedStories260K() throws Exception {
        Path file = dir.resolve("stories260K.gguf");
        Converter.convert(TestModels.stories260K(), TestModels.tok512(), file, DType.F32, total -> done -> { });
        Map<String, Object> npm = compareWithNpm(file);
        assertThat(value(metadata(npm), "llama.embedding_length")).isEqualTo(64.0);
        assertThat((List<?>) npm.get("tensors")).hasSize(3 + 5 * 9 - 1);   // shared classifier: no output.weight
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> metadata(Map<String, Object> npm) {
        return (Map<String, Object>) npm.get("metadata");
    }

    @SuppressWarnings("unchecked")
    private static Object value(Map<String, Object> meta, String key) {
        assertThat(meta).containsKey(key);
        return ((Map<String, Object>) meta.get(key)).get("value");
    }

    /** Every key and tensor entry the npm reader reports equals what our reader parses, and vice versa. */
    @SuppressWarnings("unchecked")
    private Map<String, Object> compareWithNpm(Path file) throws Exception {
        Map<String, Object> npm = (Map<String, Object>) MiniJson.parse(runCheck(file));
        try (Arena arena = Arena.ofConfined()) {
            GgufFile ours = GgufReader.read(file, arena);
            assertThat(((Number) npm.get("tensorDataOffset")).longValue()).isEqualTo(ours.dataOffset());

            Map<String, Object> meta = metadata(npm);
            Set<String> expectedKeys = new HashSet<>(ours.metadata().keySet());
            expectedKeys.addAll(List.of("version", "tensor_count", "kv_count"));
            assertThat(meta.keySet()).containsExactlyInAnyOrderElementsOf(expectedKeys);
            assertThat(value(meta, "version")).isEqualTo(3.0);
            assertThat(value(meta, "tensor_count")).isEqualTo((double) ours.tensors().size());
            assertThat(value(meta, "kv_count")).isEqualTo((double) ours.metadata().size());
            ours.metadata().forEach((key, v) -> {
                Map<String, Object> entry = (Map<String, Object>) meta.get(key);
                assertThat(entry.get("type")).as(key + " type").isEqualTo((double) v.type().ordinal());
                if (v.value() instanceof GgufValue.Array(GgufType elementType, List<Object> items)) {
                    assertThat(entry.get("subType")).as(key + " element type").isEqualTo((double) elementType.ordinal());
                    List<Object> got = (List<Object>) entry.get("value");
                    assertThat(got).as(key).hasSameSizeAs(items);
                    for (int i = 0; i < items.size(); i++) {
                        assertSameValue(got.get(i), items.get(i), key + "[" + i + "]");
                    }
                } else {
                    assertSameValue(entry.get("value"), v.value(), key);
                }
            });

            List<Map<String, Object>> tensors = (List<Map<String, Object>>) npm.get("tensors");
            assertThat(tensors).hasSameSizeAs(ours.tensors());
            for (int i = 0; i < tensors.size(); i++) {
                GgufTensorInfo want = ours.tensors().get(i);
                Map<String, Object> got = tensors.get(i);
                assertThat(got.get("name")).isEqualTo(want.name());
                assertThat(got.get("shape")).as(want.name()).isEqualTo(want.dims().stream().map(Long::doubleValue).toList());
                assertThat(got.get("dtype")).as(want.name()).isEqualTo((double) GgufReader.ggmlTypeId(want.type()));
                assertThat(got.get("offset")).as(want.name()).isEqualTo((double) want.offset());
            }
        }
        return npm;
    }

    /** JSON turns every number into a double (and -0 into 0), so numbers compare by value. */
    private static void assertSameValue(Object fromJson, Object written, String what) {
        if (written instanceof Number n) {
            assertThat(fromJson).as(what).isInstanceOf(Double.class);
            assertThat((double) fromJson == n.doubleValue()).as(what + ": npm " + fromJson + " vs " + n).isTrue();
        } else {
            assertThat(fromJson).as(what).isEqualTo(written);
        }
    }

    private static String runCheck(Path file) throws Exception {
        Process p = new ProcessBuilder("node", "check.mjs", file.toString()).directory(CHECK_DIR.toFile()).start();
        // drain stderr concurrently so a chatty failure cannot block the child
        var stderr = new java.util.concurrent.CompletableFuture<String>();
        Thread.ofVirtual().start(() -> {
            try {
                stderr.complete(new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
            } catch (Exception e) {
                stderr.complete(e.toString());
            }
        });
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("node finished").isTrue();
        assertThat(p.exitValue()).as("node check.mjs failed: " + stderr.get()).isZero();
        return out;
    }
}
