package dev.pagewarden.cuda.cli;

import dev.pagewarden.cli.command.Args;
import dev.pagewarden.cli.command.Command;
import dev.pagewarden.cli.command.Json;
import dev.pagewarden.cli.tools.ModelGenerator;
import dev.pagewarden.cli.tools.ModelShape;
import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.backend.BackendOptions;
import dev.pagewarden.core.backend.BackendProvider;
import dev.pagewarden.core.backend.Backends;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;
import dev.pagewarden.core.tokenizer.Tokenizer;
import dev.pagewarden.cuda.GpuBackend;
import dev.pagewarden.cuda.GpuChecks;
import dev.pagewarden.cuda.MmaPacking;
import dev.pagewarden.cuda.QuantPacking;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code gpu-check}: the GPU backend against the CPU backend on this machine's GPU, in one run. Prints
 * one JSON object (and a verdict line on stderr); exit 0 when every check passed, 1 when one failed,
 * 3 when there is no usable GPU here (the reason is in the JSON).
 */
public final class GpuCheckCommand implements Command {
    /** Per precision: the GPU sums in another order than the CPU, in fp32 both. */
    static final double MAX_REL_ERROR = 1e-4;
    static final double NEAR_TIE = 1e-3;
    /**
     * The tensor-core path (-Dpagewarden.gpu.gemm=true) rounds each product's activations to f16 (11
     * significant bits) or bf16 (8): about 2e-4 / 2e-3 relative per product in the emulation (MmaGemmTest),
     * compounded over the layers. Logits tolerance against the CPU (itself ~1e-6 from float64), and the
     * CPU top-2 margin below which greedy tokens may part.
     */
    public static final double MAX_REL_ERROR_GEMM_F16 = 5e-3;
    public static final double MAX_REL_ERROR_GEMM_BF16 = 3e-2;
    static final double NEAR_TIE_GEMM = 0.1;

    @Override
    public String name() {
        return "gpu-check";
    }

    @Override
    public String usage() {
        return "gpu-check --model FILE [--tokenizer FILE] [--tokens N] [--out FILE.json]";
    }

    @Override
    public int run(Args args, PrintStream out, PrintStream err) throws Exception {
        Path modelPath = args.existingFile("model");
        Path tokPath = args.optionalExistingFile("tokenizer");
        int maxNew = args.integer("tokens", 200);
        String outFile = args.string("out", null);
        args.rejectUnknown();
        Map<String, Object> r = new LinkedHashMap<>();
        BackendProvider gpu = Backends.all().stream().filter(p -> p.name().equals("gpu")).findFirst().orElse(null);
        if (gpu == null || !gpu.available()) {
            r.put("gpu", false);
            r.put("reason", gpu == null ? "no gpu backend in this jar" : gpu.unavailableReason());
            emit(r, out, outFile);
            err.println("gpu-check: no usable GPU here: " + r.get("reason"));
            return 3;
        }
        r.put("gpu", true);
        r.put("gemm", GpuBackend.GEMM);
        // every check runs even when one before it threw: a first run on a new GPU should report all it can
        List<Boolean> verdicts = new ArrayList<>();
        try (LoadedModel model = ModelLoader.load(modelPath, tokPath)) {
            ModelConfig c = model.config();
            int[] prompt = model.vocabulary() != null
                    ? new Tokenizer(model.vocabulary()).encode("Once upon a time, in a big forest, there lived a tiny rabbit", true, false)
                    : GpuChecks.randomTokens(12, c.vocabSize(), 1);
            int[] tokens = Arrays.copyOf(prompt, Math.min(c.seqLen(), prompt.length + 40));
            System.arraycopy(GpuChecks.randomTokens(tokens.length - prompt.length, c.vocabSize(), 3), 0, tokens,
                    prompt.length, tokens.length - prompt.length);
            int[] short20 = Arrays.copyOf(tokens, Math.min(tokens.length, 20));
            guarded("device", r, verdicts, err, () -> {
                try (Backend b = gpu.create(model, BackendOptions.defaults())) {
                    r.put("device", ((dev.pagewarden.cuda.GpuBackend) b).describe());
                }
                return true;
            });
            guarded("parity_real_model", r, verdicts, err, () -> {
                double parity = GpuChecks.parity(model, tokens, prompt.length);
                r.put("parity_real_model_max_rel_error", parity);
                return parity < MAX_REL_ERROR;
            });
            // greedy: GPU tokens equal CPU tokens, except at a CPU near-tie (then the continuations may part)
            guarded("greedy", r, verdicts, err, () -> greedy(gpu, model, prompt, maxNew, NEAR_TIE, "greedy", r));
            guarded("batch_invariance", r, verdicts, err, () -> {
                try (Backend b = gpu.create(model, BackendOptions.defaults())) {
                    double inv = GpuChecks.batchInvariance(b, short20, 7);
                    r.put("batch_invariance_max_abs_diff", inv);
                    return inv == 0.0;
                }
            });
            guarded("decode_invariance", r, verdicts, err, () -> {
                try (Backend b = gpu.create(model, BackendOptions.defaults())) {
                    double inv = GpuChecks.decodeInvariance(b, short20, 7);
                    r.put("decode_invariance_max_abs_diff", inv);
                    return inv == 0.0;
                }
            });
            guarded("tags", r, verdicts, err, () -> {
                GpuChecks.TagChecks tags = GpuChecks.tagChecks(model, short20);
                r.putAll(GpuChecks.asMap(tags));
                r.put("tag_details", tags.details());
                return tags.staleEpoch() != null && tags.unwritten() != null && tags.scrubbedRead() != null
                        && tags.neighbourUntouched();
            });
            guarded("writer_shadow", r, verdicts, err, () -> {
                try (Backend b = gpu.create(model, BackendOptions.defaults())) {
                    GpuChecks.ShadowChecks shadow = GpuChecks.writerShadow(b, short20);
                    r.putAll(GpuChecks.asMap(shadow));
                    return shadow.slotsWritten() > 0 && shadow.wrong() == 0 && shadow.scrubZeroes() && shadow.neighbourKept();
                }
            });
            guarded("fused_rope", r, verdicts, err, () -> {
                double d = GpuChecks.fusedRopeDifference(model, tokens, prompt.length);
                r.put("fused_rope_max_abs_diff", d);
                return d == 0.0;
            });
            guarded("graphs", r, verdicts, err, () -> {
                GpuChecks.GraphChecks g = GpuChecks.graphs(model, tokens, prompt.length, 8, 40);
                r.put("graphs_max_abs_diff", g.maxAbsDiff());
                r.put("graphs_batched_max_abs_diff", g.batchedMaxAbsDiff());
                r.put("graphs_captured", g.captured());
                return g.maxAbsDiff() == 0.0 && g.batchedMaxAbsDiff() == 0.0 && g.captured() > 1;
            });
            guarded("checksums", r, verdicts, err, () -> {
                GpuChecks.ChecksumChecks crc = GpuChecks.checksums(model, tokens);
                r.putAll(GpuChecks.asMap(crc));
                return crc.mismatches() == 0 && crc.corruptionDetected() && crc.scrubZeroes();
            });
        }
        // the other precisions on generated models with grouped-query attention
        Path dir = Files.createTempDirectory("pagewarden-gpu-check");
        try {
            ModelConfig shape = new ModelConfig(256, 512, 2, 8, 2, 512, 128, 1e-5f, 10000f, false);
            // with the tensor-core kernels on, the quantized types too (they multiply only through them)
            List<DType> types = GpuBackend.GEMM
                    ? List.of(DType.F32, DType.F16, DType.Q8_0, DType.BF16, DType.Q4_0, DType.Q4_K, DType.Q5_K, DType.Q6_K)
                    : List.of(DType.F32, DType.F16, DType.Q8_0, DType.BF16);
            for (DType t : types) {
                String name = t.name().toLowerCase(Locale.ROOT);
                String key = "parity_random_" + name;
                Path f = dir.resolve("random-" + t + ".gguf");
                boolean mma = GpuBackend.GEMM && (MmaPacking.packs(t) || QuantPacking.TYPES.contains(t));
                double tolerance = !mma ? MAX_REL_ERROR : t == DType.BF16 ? MAX_REL_ERROR_GEMM_BF16 : MAX_REL_ERROR_GEMM_F16;
                guarded(key, r, verdicts, err, () -> {
                    ModelGenerator.generate(shape, t, ModelGenerator.FileFormat.GGUF, 5, f, size -> done -> { });
                    try (LoadedModel m = ModelLoader.load(f, null)) {
                        double e = GpuChecks.parity(m, GpuChecks.randomTokens(60, shape.vocabSize(), 9), 24);
                        r.put(key + "_max_rel_error", e);
                        r.put(key + "_tolerance", tolerance);
                        return e < tolerance;
                    }
                });
                if (mma && Files.exists(f)) {
                    // the tensor-core path at every batch size: one accumulation order, so bit-identical logits
                    try (LoadedModel m = ModelLoader.load(f, null)) {
                        int[] seq = GpuChecks.randomTokens(20, shape.vocabSize(), 21);
                        guarded("gemm_" + name + "_greedy", r, verdicts, err,
                                () -> greedy(gpu, m, Arrays.copyOf(seq, 8), 64, NEAR_TIE_GEMM, "gemm_" + name + "_greedy", r));
                        guarded("gemm_" + name + "_batch_invariance", r, verdicts, err, () -> {
                            try (Backend b = gpu.create(m, BackendOptions.defaults())) {
                                GpuChecks.Sweep sw = GpuChecks.batchInvarianceSweep(b, seq, 64);
                                r.put("gemm_" + name + "_batch_invariance_batches", sw.batches());
                                r.put("gemm_" + name + "_batch_invariance_max_abs_diff", sw.maxAbsDiff());
                                r.put("gemm_" + name + "_batch_invariance_worst_neighbours", sw.worstNeighbours());
                                return sw.maxAbsDiff() == 0.0;
                            }
                        });
                        guarded("gemm_" + name + "_decode_invariance", r, verdicts, err, () -> {
                            try (Backend b = gpu.create(m, BackendOptions.defaults())) {
                                double worst = 0;
                                for (int n : new int[] {1, 7, 63}) {
                                    worst = Math.max(worst, GpuChecks.decodeInvariance(b, seq, n));
                                }
                                r.put("gemm_" + name + "_decode_invariance_max_abs_diff", worst);
                                return worst == 0.0;
                            }
                        });
                    }
                }
                Files.deleteIfExists(f);
            }
            // the other architectures: qwen2 (Q/K/V biases, NEOX RoPE), qwen3 (per-head Q/K norms, Q wider
            // than dim), llama with Llama 3.2's RoPE scaling
            String base = "dim=256,hidden=512,layers=2,heads=8,kv_heads=2,vocab=512,seq=128,shared=false";
            String[][] archs = {{"qwen2", null, base, "F16"}, {"qwen3", null, base + ",head_dim=48", "F32"},
                    {"llama", "llama3", base, "Q8_0"}};
            for (String[] a : archs) {
                String key = "arch_" + a[0] + (a[1] == null ? "" : "_" + a[1]);
                Path f = dir.resolve(key + ".gguf");
                guarded(key, r, verdicts, err, () -> {
                    ModelConfig cfg = ModelShape.parse(a[2]).forArchitecture(a[0], a[1]).config();
                    ModelGenerator.generate(cfg, DType.valueOf(a[3]), ModelGenerator.FileFormat.GGUF, 7, f, size -> done -> { });
                    try (LoadedModel m = ModelLoader.load(f, null)) {
                        int[] t = GpuChecks.randomTokens(60, cfg.vocabSize(), 17);
                        double e = GpuChecks.parity(m, t, 24);
                        double fused = GpuChecks.fusedRopeDifference(m, t, 24);
                        double inv;
                        try (Backend b = gpu.create(m, BackendOptions.defaults())) {
                            inv = GpuChecks.decodeInvariance(b, Arrays.copyOf(t, 20), 7);
                        }
                        r.put(key + "_max_rel_error", e);
                        r.put(key + "_fused_rope_max_abs_diff", fused);
                        r.put(key + "_decode_invariance_max_abs_diff", inv);
                        return e < MAX_REL_ERROR && fused == 0.0 && inv == 0.0;
                    }
                });
                Files.deleteIfExists(f);
            }
        } finally {
            Files.deleteIfExists(dir);
        }
        // the GEMM's tile decoders: every decoded weight bit for bit the CPU's decode rounded to fp16
        guarded("quant_decode", r, verdicts, err, () -> {
            List<GpuChecks.QuantDecode> decode = GpuChecks.quantDecode();
            r.put("quantDecode", GpuChecks.asMap(decode));
            return decode.stream().allMatch(q -> q.values() > 0 && q.mismatches() == 0);
        });
        guarded("copy_bandwidth", r, verdicts, err, () -> {
            r.put("copy_bandwidth_bytes_per_s", dev.pagewarden.cuda.GpuDiagnostics.copyBandwidth());
            return true;
        });
        boolean ok = !verdicts.isEmpty() && !verdicts.contains(false);
        r.put("pass", ok);
        emit(r, out, outFile);
        err.println("gpu-check: " + (ok ? "PASS" : "FAIL"));
        return ok ? 0 : 1;
    }

    /**
     * Greedy tokens of the GPU against the CPU's: equal, or parting where the CPU's top-2 margin was
     * below {@code nearTie} (then the continuations may part). Results under {@code key}_*.
     */
    private static boolean greedy(BackendProvider gpu, LoadedModel model, int[] prompt, int maxNew, double nearTie,
                                  String key, Map<String, Object> r) {
        GpuChecks.Greedy g;
        GpuChecks.Greedy cpuG;
        try (Backend b = gpu.create(model, BackendOptions.defaults())) {
            g = GpuChecks.greedy(b, prompt, maxNew);
        }
        try (Backend b = Backends.select("cpu").create(model, BackendOptions.defaults())) {
            cpuG = GpuChecks.greedy(b, prompt, maxNew);
        }
        int same = 0;
        while (same < g.tokens().length && g.tokens()[same] == cpuG.tokens()[same]) {
            same++;
        }
        boolean tokensOk = same == g.tokens().length || cpuG.margins()[same] < nearTie;
        r.put(key + "_tokens", g.tokens().length);
        r.put(key + "_identical_prefix", same);
        r.put(key + "_divergence_cpu_margin", same == g.tokens().length ? null : cpuG.margins()[same]);
        r.put(key + "_min_cpu_margin", java.util.Arrays.stream(cpuG.margins()).min().orElse(Double.NaN));
        if (model.vocabulary() != null) {
            Tokenizer tk = new Tokenizer(model.vocabulary());
            StringBuilder text = new StringBuilder();
            int prev = prompt[prompt.length - 1];
            for (int t : g.tokens()) {
                text.append(tk.decode(prev, t));
                prev = t;
            }
            r.put(key + "_gpu_text", text.toString());
        }
        r.put(key + "_tokens_equal", tokensOk);
        return tokensOk;
    }

    /** Runs one check; a check that throws fails, with its exception in the results, and the next one runs. */
    private static void guarded(String name, Map<String, Object> r, List<Boolean> verdicts, PrintStream err,
                                Callable<Boolean> check) {
        long t0 = System.nanoTime();
        boolean passed;
        try {
            passed = check.call();
        } catch (Exception | Error e) {
            StringWriter trace = new StringWriter();
            e.printStackTrace(new PrintWriter(trace));
            err.println("gpu-check: " + name + " threw:\n" + trace);
            r.put("error_" + name, e.toString());
            passed = false;
        }
        verdicts.add(passed);
        err.printf(Locale.ROOT, "gpu-check: %-26s %s (%.1f s)%n", name, passed ? "pass" : "FAIL", (System.nanoTime() - t0) / 1e9);
    }

    private static void emit(Map<String, Object> r, PrintStream out, String file) throws java.io.IOException {
        String json = Json.write(r);
        out.println(json);
        if (file != null) {
            Files.writeString(Path.of(file), json + "\n");
        }
    }
}
