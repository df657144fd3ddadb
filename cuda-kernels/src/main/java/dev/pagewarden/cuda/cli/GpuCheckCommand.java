package dev.pagewarden.cuda.cli;

import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.backend.BackendOptions;
import dev.pagewarden.core.backend.BackendProvider;
import dev.pagewarden.core.backend.Backends;
import dev.pagewarden.core.cli.Args;
import dev.pagewarden.core.cli.Command;
import dev.pagewarden.core.cli.Json;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.LoadedModel;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.ModelLoader;
import dev.pagewarden.core.tokenizer.Tokenizer;
import dev.pagewarden.core.tools.ModelGenerator;
import dev.pagewarden.cuda.GpuChecks;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code gpu-check}: the GPU backend against the CPU backend on this machine's GPU, in one run. Prints
 * one JSON object (and a verdict line on stderr); exit 0 when every check passed, 1 when one failed,
 * 3 when there is no usable GPU here (the reason is in the JSON).
 */
public final class GpuCheckCommand implements Command {
    /** Per precision: the GPU sums in another order than the CPU, in fp32 both. */
    static final double MAX_REL_ERROR = 1e-4;
    static final double NEAR_TIE = 1e-3;

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
        boolean ok = true;
        try (LoadedModel model = ModelLoader.load(modelPath, tokPath)) {
            try (Backend b = gpu.create(model, BackendOptions.defaults())) {
                r.put("device", ((dev.pagewarden.cuda.GpuBackend) b).describe());
            }
            ModelConfig c = model.config();
            int[] prompt = model.vocabulary() != null
                    ? new Tokenizer(model.vocabulary()).encode("Once upon a time, in a big forest, there lived a tiny rabbit", true, false)
                    : GpuChecks.randomTokens(12, c.vocabSize(), 1);
            int[] tokens = Arrays.copyOf(prompt, Math.min(c.seqLen(), prompt.length + 40));
            System.arraycopy(GpuChecks.randomTokens(tokens.length - prompt.length, c.vocabSize(), 3), 0, tokens,
                    prompt.length, tokens.length - prompt.length);
            double parity = GpuChecks.parity(model, tokens, prompt.length);
            r.put("parity_real_model_max_rel_error", parity);
            ok &= parity < MAX_REL_ERROR;

            // greedy: GPU tokens equal CPU tokens, except at a CPU near-tie (then the continuations may part)
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
            boolean tokensOk = same == g.tokens().length || cpuG.margins()[same] < NEAR_TIE;
            r.put("greedy_tokens", g.tokens().length);
            r.put("greedy_identical_prefix", same);
            r.put("greedy_divergence_cpu_margin", same == g.tokens().length ? null : cpuG.margins()[same]);
            r.put("greedy_tokens_equal", tokensOk);
            ok &= tokensOk;

            try (Backend b = gpu.create(model, BackendOptions.defaults())) {
                double inv = GpuChecks.batchInvariance(b, Arrays.copyOf(tokens, Math.min(tokens.length, 20)), 7);
                r.put("batch_invariance_max_abs_diff", inv);
                ok &= inv == 0.0;
            }
            GpuChecks.TagChecks tags = GpuChecks.tagChecks(model, Arrays.copyOf(tokens, Math.min(tokens.length, 20)));
            GpuChecks.ChecksumChecks crc = GpuChecks.checksums(model, tokens);
            r.putAll(GpuChecks.asMap(tags, crc));
            r.put("tag_details", tags.details());
            ok &= tags.staleEpoch() != null && tags.unwritten() != null && tags.scrubbedRead() != null
                    && tags.neighbourUntouched();
            ok &= crc.mismatches() == 0 && crc.corruptionDetected() && crc.scrubZeroes();
        }
        // the other precisions on generated models with grouped-query attention
        Path dir = Files.createTempDirectory("pagewarden-gpu-check");
        try {
            ModelConfig shape = new ModelConfig(256, 512, 2, 8, 2, 512, 128, 1e-5f, 10000f, false);
            for (DType t : List.of(DType.F32, DType.F16, DType.Q8_0)) {
                Path f = dir.resolve("random-" + t + ".gguf");
                ModelGenerator.generate(shape, t, ModelGenerator.FileFormat.GGUF, 5, f, size -> done -> { });
                try (LoadedModel m = ModelLoader.load(f, null)) {
                    double e = GpuChecks.parity(m, GpuChecks.randomTokens(60, shape.vocabSize(), 9), 24);
                    r.put("parity_random_" + t.name().toLowerCase(Locale.ROOT) + "_max_rel_error", e);
                    ok &= e < MAX_REL_ERROR;
                }
                Files.deleteIfExists(f);
            }
        } finally {
            Files.deleteIfExists(dir);
        }
        r.put("copy_bandwidth_bytes_per_s", dev.pagewarden.cuda.GpuDiagnostics.copyBandwidth());
        r.put("pass", ok);
        emit(r, out, outFile);
        err.println("gpu-check: " + (ok ? "PASS" : "FAIL"));
        return ok ? 0 : 1;
    }

    private static void emit(Map<String, Object> r, PrintStream out, String file) throws java.io.IOException {
        String json = Json.write(r);
        out.println(json);
        if (file != null) {
            Files.writeString(Path.of(file), json + "\n");
        }
    }
}
