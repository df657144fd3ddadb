package dev.pagewarden.cuda.cli;

import dev.pagewarden.command.Args;
import dev.pagewarden.command.Command;
import dev.pagewarden.command.Json;
import dev.pagewarden.core.model.write.ModelGenerator;
import dev.pagewarden.core.model.write.ModelShape;
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
import dev.pagewarden.cuda.cli.CheckRun.Verdict;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code gpu-check}: the GPU backend against the CPU backend on this machine's GPU, in one run. Prints
 * one JSON object (every failed check with its reason under {@code failures}) and a line per check on
 * stderr ({@code gpu-check: NAME FAIL: REASON}); exit 0 when every check passed, 1 when one failed, 3
 * when there is no usable GPU here (the reason is in the JSON). {@code --backend cpu} runs the checks
 * that hold for any backend on the CPU and skips those that need the device: the same command, with
 * the same checks' logic, on a machine without a GPU.
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
        return "gpu-check --model FILE [--tokenizer FILE] [--tokens N] [--sweep N] [--backend gpu|cpu] [--out FILE.json]";
    }

    /** Why a check is skipped under {@code --backend cpu}: it reads device memory or times device kernels. */
    private static final String NEEDS_DEVICE = "needs the gpu backend (this run: --backend cpu)";

    @Override
    public int run(Args args, PrintStream out, PrintStream err) throws Exception {
        Options o = Options.parse(args);
        Map<String, Object> r = new LinkedHashMap<>();
        BackendProvider under = Backends.all().stream().filter(p -> p.name().equals(o.backend())).findFirst().orElse(null);
        if (o.onGpu() && (under == null || !under.available())) {
            r.put("gpu", false);
            r.put("reason", under == null ? "no gpu backend in this jar" : under.unavailableReason());
            emit(r, out, o.outFile());
            err.println("gpu-check: no usable GPU here: " + r.get("reason"));
            return 3;
        }
        // --backend cpu: the checks that hold for any backend run on the CPU (the GPU's are compared with the
        // CPU, so there they compare the CPU with itself); those that need the device are skipped, with why
        r.put("gpu", o.onGpu());
        r.put("backend", o.backend());
        r.put("gemm", GpuBackend.GEMM);
        Session s = new Session(o, under, new CheckRun(err), r);
        s.realModelChecks();
        s.generatedModelChecks();
        s.deviceDiagnostics();
        s.checks().report(r);
        boolean ok = s.checks().passed();
        emit(r, out, o.outFile());
        err.println("gpu-check: " + (ok ? "PASS" : "FAIL") + " (backend " + o.backend() + ")");
        return ok ? 0 : 1;
    }

    /** The command line. */
    private record Options(Path model, Path tokenizer, int maxNew, int sweep, String backend, String outFile) {
        static Options parse(Args args) {
            Path modelPath = args.existingFile("model");
            Path tokPath = args.optionalExistingFile("tokenizer");
            int maxNew = args.integer("tokens", 200);
            // the tensor-core checks: batch invariance among 1..sweep neighbours, a decode step beside 1, 7 and sweep-1
            int sweep = args.integer("sweep", 64);
            String backendName = args.string("backend", "gpu");
            String outFile = args.string("out", null);
            args.rejectUnknown();
            if (!backendName.equals("gpu") && !backendName.equals("cpu")) {
                throw new Args.UsageException("--backend must be gpu or cpu, got " + backendName);
            }
            if (sweep < 1) {
                throw new Args.UsageException("--sweep must be at least 1, got " + sweep);
            }
            return new Options(modelPath, tokPath, maxNew, sweep, backendName, outFile);
        }

        boolean onGpu() {
            return backend.equals("gpu");
        }
    }

    /** The real model's token sequences: a prompt, it continued to {@code tokens}, and their first 20. */
    private record Inputs(int[] prompt, int[] tokens, int[] short20) {
        static Inputs of(LoadedModel model) {
            ModelConfig c = model.config();
            int[] prompt = model.vocabulary() != null
                    ? new Tokenizer(model.vocabulary()).encode("Once upon a time, in a big forest, there lived a tiny rabbit", true, false)
                    : GpuChecks.randomTokens(12, c.vocabSize(), 1);
            int[] tokens = Arrays.copyOf(prompt, Math.min(c.seqLen(), prompt.length + 40));
            System.arraycopy(GpuChecks.randomTokens(tokens.length - prompt.length, c.vocabSize(), 3), 0, tokens,
                    prompt.length, tokens.length - prompt.length);
            return new Inputs(prompt, tokens, Arrays.copyOf(tokens, Math.min(tokens.length, 20)));
        }
    }

    /** One run's checks, in the order they run; each writes its numbers into {@code r}. */
    private record Session(Options o, BackendProvider under, CheckRun checks, Map<String, Object> r) {

        /** The model given on the command line: agreement with the CPU, invariance, isolation, device kernels. */
        void realModelChecks() throws Exception {
            try (LoadedModel model = ModelLoader.load(o.model(), o.tokenizer())) {
                Inputs in = Inputs.of(model);
                agreementChecks(model, in);
                isolationChecks(model, in);
                deviceKernelChecks(model, in);
            }
        }

        private void agreementChecks(LoadedModel model, Inputs in) {
            deviceCheck("device", () -> {
                try (Backend b = under.create(model, BackendOptions.defaults())) {
                    r.put("device", ((GpuBackend) b).describe());
                }
                return Verdict.PASS;
            });
            checks.run("parity_real_model", () -> {
                double parity = GpuChecks.parity(under, model, in.tokens(), in.prompt().length);
                r.put("parity_real_model_max_rel_error", parity);
                return Verdict.when(parity < MAX_REL_ERROR, "max relative error %.3g, tolerance %.3g", parity, MAX_REL_ERROR);
            });
            // greedy: tokens equal the CPU's, except at a CPU near-tie (then the continuations may part)
            checks.run("greedy", () -> greedy(under, model, in.prompt(), o.maxNew(), NEAR_TIE, "greedy", r));
            checks.run("batch_invariance", () -> {
                try (Backend b = under.create(model, BackendOptions.defaults())) {
                    double inv = GpuChecks.batchInvariance(b, in.short20(), 7);
                    r.put("batch_invariance_max_abs_diff", inv);
                    return Verdict.when(inv == 0.0, "logits alone vs among 7 neighbours differ by up to %s", inv);
                }
            });
            checks.run("decode_invariance", () -> {
                try (Backend b = under.create(model, BackendOptions.defaults())) {
                    double inv = GpuChecks.decodeInvariance(b, in.short20(), 7);
                    r.put("decode_invariance_max_abs_diff", inv);
                    return Verdict.when(inv == 0.0, "a decode step alone vs beside 7 others differs by up to %s", inv);
                }
            });
        }

        private void isolationChecks(LoadedModel model, Inputs in) {
            deviceCheck("tags", () -> {
                GpuChecks.TagChecks tags = GpuChecks.tagChecks(model, in.short20());
                r.putAll(GpuChecks.asMap(tags));
                r.put("tag_details", tags.details());
                return Verdict.when(tags.staleEpoch() != null && tags.unwritten() != null && tags.scrubbedRead() != null
                                && tags.neighbourUntouched(),
                        "stale epoch refused as %s, unwritten slot as %s, scrubbed page as %s (null: not refused), "
                                + "neighbour untouched %s", tags.staleEpoch(), tags.unwritten(), tags.scrubbedRead(),
                        tags.neighbourUntouched());
            });
            checks.run("writer_shadow", () -> {
                try (Backend b = under.create(model, BackendOptions.defaults())) {
                    GpuChecks.ShadowChecks shadow = GpuChecks.writerShadow(b, in.short20());
                    r.putAll(GpuChecks.asMap(shadow));
                    return Verdict.when(shadow.slotsWritten() > 0 && shadow.wrong() == 0 && shadow.scrubZeroes()
                                    && shadow.neighbourKept(), "%d slots written, %d with a wrong writer, scrub zeroes %s, "
                                    + "neighbour kept %s", shadow.slotsWritten(), shadow.wrong(), shadow.scrubZeroes(),
                            shadow.neighbourKept());
                }
            });
        }

        private void deviceKernelChecks(LoadedModel model, Inputs in) {
            deviceCheck("fused_rope", () -> {
                double d = GpuChecks.fusedRopeDifference(model, in.tokens(), in.prompt().length);
                r.put("fused_rope_max_abs_diff", d);
                return Verdict.when(d == 0.0, "fused vs pw_rope logits differ by up to %s", d);
            });
            deviceCheck("graphs", () -> {
                GpuChecks.GraphChecks g = GpuChecks.graphs(model, in.tokens(), in.prompt().length, 8, 40);
                r.put("graphs_max_abs_diff", g.maxAbsDiff());
                r.put("graphs_batched_max_abs_diff", g.batchedMaxAbsDiff());
                r.put("graphs_captured", g.captured());
                // at least the single sequence's decode shape and the batch's
                return Verdict.when(g.maxAbsDiff() == 0.0 && g.batchedMaxAbsDiff() == 0.0 && g.captured() >= 2,
                        "graphs vs launches differ by up to %s (one sequence) and %s (a batch of 8); %d graphs captured, "
                                + "2 needed", g.maxAbsDiff(), g.batchedMaxAbsDiff(), g.captured());
            });
            deviceCheck("checksums", () -> {
                GpuChecks.ChecksumChecks crc = GpuChecks.checksums(model, in.tokens());
                r.putAll(GpuChecks.asMap(crc));
                return Verdict.when(crc.mismatches() == 0 && crc.corruptionDetected() && crc.scrubZeroes(),
                        "%d of %d pages' device CRC32C differ from the host's, corruption detected %s, scrub zeroes %s",
                        crc.mismatches(), crc.pagesCompared(), crc.corruptionDetected(), crc.scrubZeroes());
            });
        }

        /** The other precisions and architectures, on small models generated into a temporary folder. */
        void generatedModelChecks() throws Exception {
            Path dir = Files.createTempDirectory("pagewarden-gpu-check");
            try {
                precisionChecks(dir);
                architectureChecks(dir);
            } finally {
                Files.deleteIfExists(dir);
            }
        }

        /** Parity per weight type on a model with grouped-query attention; the tensor-core path's own checks where it runs. */
        private void precisionChecks(Path dir) throws Exception {
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
                checks.run(key, () -> {
                    ModelGenerator.generate(shape, t, ModelGenerator.FileFormat.GGUF, 5, f, size -> done -> { });
                    try (LoadedModel m = ModelLoader.load(f, null)) {
                        double e = GpuChecks.parity(under, m, GpuChecks.randomTokens(60, shape.vocabSize(), 9), 24);
                        r.put(key + "_max_rel_error", e);
                        r.put(key + "_tolerance", tolerance);
                        return Verdict.when(e < tolerance, "max relative error %.3g, tolerance %.3g", e, tolerance);
                    }
                });
                if (mma && Files.exists(f)) {
                    gemmChecks(f, shape, name);
                }
                Files.deleteIfExists(f);
            }
        }

        /** The tensor-core path at every batch size: one accumulation order, so bit-identical logits. */
        private void gemmChecks(Path f, ModelConfig shape, String name) throws Exception {
            try (LoadedModel m = ModelLoader.load(f, null)) {
                int[] seq = GpuChecks.randomTokens(20, shape.vocabSize(), 21);
                checks.run("gemm_" + name + "_greedy", () -> greedy(under, m, Arrays.copyOf(seq, 8), Math.min(o.maxNew(), 64),
                        NEAR_TIE_GEMM, "gemm_" + name + "_greedy", r));
                checks.run("gemm_" + name + "_batch_invariance", () -> {
                    try (Backend b = under.create(m, BackendOptions.defaults())) {
                        GpuChecks.Sweep sw = GpuChecks.batchInvarianceSweep(b, seq, o.sweep());
                        r.put("gemm_" + name + "_batch_invariance_batches", sw.batches());
                        r.put("gemm_" + name + "_batch_invariance_max_abs_diff", sw.maxAbsDiff());
                        r.put("gemm_" + name + "_batch_invariance_worst_neighbours", sw.worstNeighbours());
                        return Verdict.when(sw.maxAbsDiff() == 0.0, "logits alone vs among %d neighbours differ by %s",
                                sw.worstNeighbours(), sw.maxAbsDiff());
                    }
                });
                checks.run("gemm_" + name + "_decode_invariance", () -> {
                    try (Backend b = under.create(m, BackendOptions.defaults())) {
                        double worst = 0;
                        int at = 0;
                        for (int n : new int[] {1, Math.min(7, o.sweep()), o.sweep() - 1}) {
                            double d = n < 1 ? 0 : GpuChecks.decodeInvariance(b, seq, n);
                            at = d > worst ? n : at;
                            worst = Math.max(worst, d);
                        }
                        r.put("gemm_" + name + "_decode_invariance_max_abs_diff", worst);
                        return Verdict.when(worst == 0.0, "a decode step alone vs beside %d others differs by %s",
                                at, worst);
                    }
                });
            }
        }

        /**
         * The other architectures: qwen2 (Q/K/V biases, NEOX RoPE), qwen3 (per-head Q/K norms, Q wider
         * than dim), llama with Llama 3.2's RoPE scaling.
         */
        private void architectureChecks(Path dir) throws Exception {
            String base = "dim=256,hidden=512,layers=2,heads=8,kv_heads=2,vocab=512,seq=128,shared=false";
            String[][] archs = {{"qwen2", null, base, "F16"}, {"qwen3", null, base + ",head_dim=48", "F32"},
                    {"llama", "llama3", base, "Q8_0"}};
            for (String[] a : archs) {
                String key = "arch_" + a[0] + (a[1] == null ? "" : "_" + a[1]);
                Path f = dir.resolve(key + ".gguf");
                checks.run(key, () -> {
                    ModelConfig cfg = ModelShape.parse(a[2]).forArchitecture(a[0], a[1]).config();
                    ModelGenerator.generate(cfg, DType.valueOf(a[3]), ModelGenerator.FileFormat.GGUF, 7, f, size -> done -> { });
                    try (LoadedModel m = ModelLoader.load(f, null)) {
                        int[] t = GpuChecks.randomTokens(60, cfg.vocabSize(), 17);
                        double e = GpuChecks.parity(under, m, t, 24);
                        // the fused RoPE exists only on the device
                        double fused = o.onGpu() ? GpuChecks.fusedRopeDifference(m, t, 24) : 0.0;
                        double inv;
                        try (Backend b = under.create(m, BackendOptions.defaults())) {
                            inv = GpuChecks.decodeInvariance(b, Arrays.copyOf(t, 20), 7);
                        }
                        r.put(key + "_max_rel_error", e);
                        if (o.onGpu()) {
                            r.put(key + "_fused_rope_max_abs_diff", fused);
                        }
                        r.put(key + "_decode_invariance_max_abs_diff", inv);
                        return Verdict.when(e < MAX_REL_ERROR && fused == 0.0 && inv == 0.0,
                                "max relative error %.3g (tolerance %.3g), fused RoPE difference %s, decode-step "
                                        + "invariance difference %s", e, MAX_REL_ERROR, fused, inv);
                    }
                });
                Files.deleteIfExists(f);
            }
        }

        /** The device alone: the GEMM's tile decoders (every decoded weight bit for bit the CPU's decode rounded to fp16), copy bandwidth. */
        void deviceDiagnostics() {
            deviceCheck("quant_decode", () -> {
                List<GpuChecks.QuantDecode> decode = GpuChecks.quantDecode();
                r.put("quantDecode", GpuChecks.asMap(decode));
                List<String> bad = decode.stream().filter(q -> q.values() == 0 || q.mismatches() > 0)
                        .map(q -> q.type() + ": " + q.mismatches() + " of " + q.values() + " values differ, first " + q.first())
                        .toList();
                return Verdict.when(bad.isEmpty(), "%s", String.join("; ", bad));
            });
            deviceCheck("copy_bandwidth", () -> {
                r.put("copy_bandwidth_bytes_per_s", dev.pagewarden.cuda.GpuDiagnostics.copyBandwidth());
                return Verdict.PASS;
            });
        }

        /** A check that reads device memory or times kernels: run on the GPU, skipped (with why) under --backend cpu. */
        private void deviceCheck(String name, Callable<Verdict> check) {
            if (o.onGpu()) {
                checks.run(name, check);
            } else {
                checks.skip(name, NEEDS_DEVICE);
            }
        }
    }

    /**
     * Greedy tokens of the GPU against the CPU's: equal, or parting where the CPU's top-2 margin was
     * below {@code nearTie} (then the continuations may part). Results under {@code key}_*.
     */
    private static Verdict greedy(BackendProvider under, LoadedModel model, int[] prompt, int maxNew, double nearTie,
                                  String key, Map<String, Object> r) {
        GpuChecks.Greedy g;
        GpuChecks.Greedy cpuG;
        try (Backend b = under.create(model, BackendOptions.defaults())) {
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
        return Verdict.when(tokensOk, "token %d of %d differs from the CPU's where its top-2 margin was %.3g (near tie: "
                + "below %.3g)", same, g.tokens().length, same < g.tokens().length ? cpuG.margins()[same] : 0, nearTie);
    }

    private static void emit(Map<String, Object> r, PrintStream out, String file) throws java.io.IOException {
        String json = Json.write(r);
        out.println(json);
        if (file != null) {
            Files.writeString(Path.of(file), json + "\n");
        }
    }
}
