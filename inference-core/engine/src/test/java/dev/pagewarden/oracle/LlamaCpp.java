package dev.pagewarden.oracle;

import dev.pagewarden.core.testing.NpmChecks;

import dev.pagewarden.command.Json;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * llama.cpp as an independent oracle on a GGUF file: runs {@code src/test/llama-cpp-check/oracle.mjs}
 * (the prebuilt CPU llama.cpp shipped by the npm package node-llama-cpp) and returns its token ids,
 * teacher-forced next-token scores and greedy token streams.
 *
 * <p>Each call starts one node process that loads the model once; {@link #batch(Path)} puts several
 * operations on one model into one process. Scores are log-probabilities ({@code log softmax(logits)}):
 * llama.cpp's logits up to a per-position constant, so a difference of two scores is a logit difference.
 *
 * <p>Needs {@code npm ci} in the script's folder and {@code node} on the PATH. {@link #require()} fails
 * the calling test under CI ({@code CI=true}) when either is missing and skips it elsewhere.
 */
public final class LlamaCpp {
    /** The script's folder, relative to the module (Maven runs tests in the module's folder). */
    /** The npm folder, from inference-core's tests or from a sibling module's (the reactor runs each in its own folder). */
    public static final Path CHECK_DIR = NpmChecks.dir("llama-cpp-check");
    private static final long TIMEOUT_SECONDS = 180;

    private LlamaCpp() {
    }

    /** llama.cpp's release and build, as node-llama-cpp reports them. */
    public record Version(String release, String repo, String nodeLlamaCpp, String build) {
        @Override
        public String toString() {
            return "llama.cpp " + release + " (" + repo + ", " + build + ", node-llama-cpp " + nodeLlamaCpp + ")";
        }
    }

    /** What llama.cpp read from the file: vocabulary size and its special token ids (-1: none). */
    public record ModelInfo(int vocab, int bos, int eos, int eot, boolean addBos) {
    }

    /**
     * llama.cpp's scores for the token after one position. {@code ids} and {@code logprobs} list the top
     * entries, most probable first; {@code full} holds every vocabulary entry's score in id order when the
     * whole vocabulary was asked for (topK 0), else null.
     */
    public record Position(int[] ids, double[] logprobs, double[] full) {
        public int top1() {
            return ids[0];
        }

        /** Score gap between the best and the second-best token (a logit difference). */
        public double margin() {
            return logprobs[0] - logprobs[1];
        }

        /** The score of {@code id}, or NaN when it is not among the entries llama.cpp returned. */
        public double logprob(int id) {
            if (full != null) {
                return full[id];
            }
            for (int i = 0; i < ids.length; i++) {
                if (ids[i] == id) {
                    return logprobs[i];
                }
            }
            return Double.NaN;
        }
    }

    /** A greedy stream: the generated ids, and whether it ended on an end-of-generation token (included). */
    public record Greedy(int[] ids, boolean stoppedAtEog) {
    }

    /** Everything one process returned, results in the order the operations were added. */
    public record Response(Version version, ModelInfo model, List<Object> results) {
        public int[] tokens(int index) {
            return (int[]) results.get(index);
        }

        @SuppressWarnings("unchecked")
        public List<Position> positions(int index) {
            return (List<Position>) results.get(index);
        }

        public Greedy greedy(int index) {
            return (Greedy) results.get(index);
        }
    }

    /** Fails under CI and skips elsewhere when node or the installed npm packages are missing. */
    public static void require() {
        String missing = null;
        if (!Files.isDirectory(CHECK_DIR.resolve("node_modules").resolve("node-llama-cpp"))
                || !Files.isDirectory(CHECK_DIR.resolve("node_modules").resolve("@node-llama-cpp").resolve("linux-x64"))) {
            missing = "node_modules missing in " + CHECK_DIR + " (run npm ci there)";
        } else if (!nodeRuns()) {
            missing = "node is not on the PATH";
        }
        if (missing != null) {
            if ("true".equals(System.getenv("CI"))) {
                Assertions.fail("llama.cpp oracle unavailable: " + missing);
            }
            System.out.println("SKIPPED: llama.cpp oracle unavailable: " + missing);
            Assumptions.abort(missing);
        }
    }

    private static boolean nodeRuns() {
        try {
            Process p = new ProcessBuilder("node", "--version").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    // ------------------------------------------------------------------------------- one-shot calls

    /** llama.cpp's token ids for {@code text}; {@code special}: parse control-token text; {@code bos}: prepend BOS. */
    public static int[] tokenize(Path gguf, String text, boolean special, boolean bos) {
        return batch(gguf).tokenize(text, special, bos).run().tokens(0);
    }

    /** Scores after every position of {@code tokens} (teacher-forced); {@code topK} 0 returns the whole vocabulary. */
    public static List<Position> teacherForced(Path gguf, int[] tokens, int topK) {
        return batch(gguf).teacherForced(tokens, topK).run().positions(0);
    }

    /** Greedy (temperature 0) continuation of {@code prompt}: at most {@code maxTokens}, stopping after an end-of-generation token. */
    public static Greedy greedy(Path gguf, int[] prompt, int maxTokens) {
        return batch(gguf).greedy(prompt, maxTokens, true).run().greedy(0);
    }

    public static Batch batch(Path gguf) {
        return new Batch(gguf);
    }

    /** Several operations on one model, run by one process in the order they were added. */
    public static final class Batch {
        private final Path gguf;
        private final List<Map<String, Object>> ops = new ArrayList<>();
        private int threads = 1;
        private String kvCache = "F32";

        private Batch(Path gguf) {
            this.gguf = gguf.toAbsolutePath();
        }

        public Batch threads(int n) {
            threads = n;
            return this;
        }

        /** llama.cpp's KV cache type: F32 (the default here, as the engine's), F16 (llama.cpp's own default) or Q8_0. */
        public Batch kvCache(String type) {
            kvCache = type;
            return this;
        }

        public Batch tokenize(String text, boolean special, boolean bos) {
            ops.add(op("tokenize", "text", text, "special", special, "bos", bos));
            return this;
        }

        public Batch teacherForced(int[] tokens, int topK) {
            ops.add(op("teacherForced", "tokens", list(tokens), "topK", topK));
            return this;
        }

        /** {@code stopAtEog}: end the stream after llama.cpp's first end-of-generation token. */
        public Batch greedy(int[] prompt, int maxTokens, boolean stopAtEog) {
            ops.add(op("greedy", "prompt", list(prompt), "maxTokens", maxTokens, "stopAtEog", stopAtEog));
            return this;
        }

        public Response run() {
            if (!Files.isRegularFile(gguf)) {
                throw new IllegalArgumentException("llama.cpp oracle: model file " + gguf + " does not exist");
            }
            Map<String, Object> request = new LinkedHashMap<>();
            request.put("model", gguf.toString());
            request.put("threads", threads);
            request.put("kvCache", kvCache);
            request.put("ops", ops);
            String out = runScript(Json.write(request));
            return parse(out, ops);
        }
    }

    private static Map<String, Object> op(String name, Object... keyValues) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("op", name);
        for (int i = 0; i < keyValues.length; i += 2) {
            m.put((String) keyValues[i], keyValues[i + 1]);
        }
        return m;
    }

    private static List<Integer> list(int[] ids) {
        return Arrays.stream(ids).boxed().toList();
    }

    private static String runScript(String request) {
        try {
            Process p = new ProcessBuilder("node", "oracle.mjs").directory(CHECK_DIR.toFile()).start();
            // drain stderr concurrently so a chatty failure cannot block the child
            CompletableFuture<String> stderr = new CompletableFuture<>();
            Thread.ofVirtual().start(() -> {
                try {
                    stderr.complete(new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
                } catch (IOException e) {
                    stderr.complete(e.toString());
                }
            });
            Thread.ofVirtual().start(() -> {
                try (var in = p.getOutputStream()) {
                    in.write(request.getBytes(StandardCharsets.UTF_8));
                } catch (IOException e) {
                    // the process died early; its exit status and stderr say why
                }
            });
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("llama.cpp oracle: node oracle.mjs ran past " + TIMEOUT_SECONDS + " s");
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException("llama.cpp oracle: node oracle.mjs exited with " + p.exitValue()
                        + ": " + stderr.get(10, TimeUnit.SECONDS).strip());
            }
            return out;
        } catch (IOException e) {
            throw new IllegalStateException("llama.cpp oracle: cannot start node in " + CHECK_DIR + ": " + e.getMessage(), e);
        } catch (Exception e) {
            if (e instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException("llama.cpp oracle: " + e, e);
        }
    }

    // ------------------------------------------------------------------------------- reading the answer

    @SuppressWarnings("unchecked")
    private static Response parse(String out, List<Map<String, Object>> ops) {
        Map<String, Object> root = (Map<String, Object>) Json.parse(out.strip());
        Map<String, Object> v = (Map<String, Object>) root.get("llamaCpp");
        Version version = new Version((String) v.get("release"), (String) v.get("repo"),
                (String) v.get("nodeLlamaCpp"), (String) v.get("build"));
        Map<String, Object> m = (Map<String, Object>) root.get("model");
        ModelInfo info = new ModelInfo(intOr(m.get("vocab"), -1), intOr(m.get("bos"), -1), intOr(m.get("eos"), -1),
                intOr(m.get("eot"), -1), Boolean.TRUE.equals(m.get("addBos")));
        List<Object> raw = (List<Object>) root.get("results");
        List<Object> results = new ArrayList<>();
        for (int i = 0; i < ops.size(); i++) {
            Map<String, Object> r = (Map<String, Object>) raw.get(i);
            results.add(switch ((String) ops.get(i).get("op")) {
                case "tokenize" -> ints((List<Object>) r.get("ids"));
                case "greedy" -> new Greedy(ints((List<Object>) r.get("ids")), Boolean.TRUE.equals(r.get("stoppedAtEog")));
                case "teacherForced" -> positions((List<Object>) r.get("positions"));
                default -> throw new IllegalStateException("unknown op " + ops.get(i).get("op"));
            });
        }
        return new Response(version, info, results);
    }

    @SuppressWarnings("unchecked")
    private static List<Position> positions(List<Object> raw) {
        List<Position> out = new ArrayList<>();
        for (Object o : raw) {
            Map<String, Object> p = (Map<String, Object>) o;
            if (p.containsKey("logprobs")) {
                List<Object> all = (List<Object>) p.get("logprobs");
                double[] full = new double[all.size()];
                for (int id = 0; id < full.length; id++) {
                    full[id] = all.get(id) == null ? Double.NEGATIVE_INFINITY : ((Number) all.get(id)).doubleValue();
                }
                Integer[] order = new Integer[full.length];
                for (int id = 0; id < order.length; id++) {
                    order[id] = id;
                }
                // most probable first; equal scores by id, as a greedy pick takes the lowest id
                Arrays.sort(order, (a, b) -> full[a] != full[b] ? Double.compare(full[b], full[a]) : Integer.compare(a, b));
                int[] ids = Arrays.stream(order).mapToInt(Integer::intValue).toArray();
                double[] sorted = Arrays.stream(ids).mapToDouble(id -> full[id]).toArray();
                out.add(new Position(ids, sorted, full));
            } else {
                List<Object> top = (List<Object>) p.get("top");
                int[] ids = new int[top.size()];
                double[] logprobs = new double[top.size()];
                for (int i = 0; i < ids.length; i++) {
                    List<Object> pair = (List<Object>) top.get(i);
                    ids[i] = ((Number) pair.get(0)).intValue();
                    logprobs[i] = ((Number) pair.get(1)).doubleValue();
                }
                out.add(new Position(ids, logprobs, null));
            }
        }
        return out;
    }

    private static int[] ints(List<Object> raw) {
        return raw.stream().mapToInt(o -> ((Number) o).intValue()).toArray();
    }

    private static int intOr(Object value, int fallback) {
        return value instanceof Number n ? n.intValue() : fallback;
    }
}
