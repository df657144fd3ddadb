package dev.pagewarden.cli.bench;

import dev.pagewarden.cli.tools.ProgressBar;
import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.fault.FaultHooks;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.tensor.Bandwidth;
import dev.pagewarden.core.tensor.Parallel;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Measures the engine end to end (admission -> prefill -> transfer -> decode) on random prompts:
 * prefill tokens/s, decode tokens/s per batch size in the steady state where exactly that many
 * sequences run, peak KV pages, and the memory read bandwidth of this machine measured in the
 * same run, so that decode speed can be read as a fraction of what the hardware allows.
 */
public final class EngineBench {

    /** What to run. */
    public record Options(String backend, int threads, int promptTokens, int genTokens, List<Integer> batches,
                          int repeats, int safetyPairs) {
        public Options {
            if (promptTokens < 1 || genTokens < 2 || batches.isEmpty() || repeats < 1 || safetyPairs < 0) {
                throw new IllegalArgumentException("bench needs prompt tokens >= 1, gen tokens >= 2, a batch size, repeats >= 1");
            }
            for (int b : batches) {
                if (b < 1) {
                    throw new IllegalArgumentException("batch sizes must be >= 1, got " + b);
                }
            }
            batches = List.copyOf(batches);
        }
    }

    /** Records each decode step's batch size and end time, and prefill chunks. */
    private static final class Recorder implements EngineMetrics {
        final List<long[]> steps = new ArrayList<>();
        long prefillTokens;
        long prefillNanos;

        @Override
        public synchronized void decodeStep(int batchSize, long nanos) {
            steps.add(new long[]{batchSize, System.nanoTime()});
        }

        @Override
        public synchronized void prefillChunk(int tokens, long nanos) {
            prefillTokens += tokens;
            prefillNanos += nanos;
        }

        synchronized void reset() {
            steps.clear();
            prefillTokens = 0;
            prefillNanos = 0;
        }

        /** Tokens/s over the run of consecutive steps that had exactly {@code batch} sequences. */
        synchronized double decodeTokS(int batch) {
            long first = -1;
            long last = -1;
            int count = 0;
            for (long[] s : steps) {
                if (s[0] == batch) {
                    if (first < 0) {
                        first = s[1];
                    }
                    last = s[1];
                    count++;
                }
            }
            return count < 2 ? Double.NaN : (double) batch * (count - 1) / ((last - first) / 1e9);
        }
    }

    public static Map<String, Object> run(LoadedModel model, Options o, PrintStream progress) throws Exception {
        ModelConfig c = model.config();
        int perRequest = o.promptTokens() + o.genTokens();
        if (perRequest > c.seqLen()) {
            throw new IllegalArgumentException("prompt " + o.promptTokens() + " + gen " + o.genTokens()
                    + " tokens exceed the model's context " + c.seqLen());
        }
        int maxBatch = o.batches().stream().mapToInt(Integer::intValue).max().orElseThrow();
        int threads = o.threads() > 0 ? o.threads() : Runtime.getRuntime().availableProcessors();

        // The probe runs right before every measured decode run: this machine's bandwidth drifts with
        // its neighbours, so each run is compared with the bandwidth of its own moment.
        progress.println("preparing the memory bandwidth probe ...");
        Parallel probePool = new Parallel(threads);
        Bandwidth.Probe probe = new Bandwidth.Probe(1L << 30);
        List<Double> bandwidths = new ArrayList<>();
        Recorder rec = new Recorder();
        EngineConfig cfg = EngineConfig.builder().backend(o.backend()).threads(threads).maxBatch(maxBatch).contextWindow(perRequest)
                .poolTokens(2 * perRequest, maxBatch * (perRequest + 16)).maxQueue(maxBatch * 2).build();
        Map<String, Object> decode = new LinkedHashMap<>();
        Map<String, Object> fraction = new LinkedHashMap<>();
        Map<String, Object> speedup = new LinkedHashMap<>();
        double prefill;
        int peakPages;
        String backendName;
        boolean hostMemory;
        long weightBytes = model.weights().bytesReadPerToken();
        SplittableRandom rnd = new SplittableRandom(1234);
        try (Engine engine = Engine.builder(model, cfg).metrics(rec).build()) {
            backendName = engine.backendName();
            // the host probe is the ceiling of the CPU backend only; another backend reads its weights
            // from its own device's memory (its check reports that device's bandwidth)
            hostMemory = backendName.equals("cpu");
            int total = o.batches().size() + o.repeats() * (1 + o.batches().size());
            ProgressBar bar = ProgressBar.steps(progress, "bench", total);
            int done = 0;
            // JIT warm-up of every batch size measured: each size runs its own kernels (a batch-1
            // step never runs the batch-8 ones), and a size left cold compiled during its first
            // measured run (batch 1 was then 4-18% slower in the first of five repeats)
            for (int b : o.batches()) {
                runBatch(engine, c, o.promptTokens(), Math.min(o.genTokens(), 64), b, rnd);
                bar.accept(++done);
            }
            List<Double> prefills = new ArrayList<>();
            Map<Integer, List<Double>> perBatch = new LinkedHashMap<>();
            Map<Integer, List<Double>> fractions = new LinkedHashMap<>();
            for (int r = 0; r < o.repeats(); r++) {
                rec.reset();
                runBatch(engine, c, o.promptTokens(), 2, 1, rnd);
                prefills.add(rec.prefillTokens / (rec.prefillNanos / 1e9));
                bar.accept(++done);
                for (int b : o.batches()) {
                    double bw = hostMemory ? probe.best(probePool, 3) * 1e9 : Double.NaN;
                    if (hostMemory) {
                        bandwidths.add(bw / 1e9);
                    }
                    rec.reset();
                    runBatch(engine, c, o.promptTokens(), o.genTokens(), b, rnd);
                    double tokS = rec.decodeTokS(b);
                    perBatch.computeIfAbsent(b, k -> new ArrayList<>()).add(tokS);
                    if (hostMemory) {
                        // one step reads the weights once for all the batch's tokens
                        fractions.computeIfAbsent(b, k -> new ArrayList<>()).add(tokS / b * weightBytes / bw);
                    }
                    bar.accept(++done);
                }
            }
            prefill = median(prefills);
            for (Map.Entry<Integer, List<Double>> e : perBatch.entrySet()) {
                decode.put(String.valueOf(e.getKey()), median(e.getValue()));
                if (hostMemory) {
                    fraction.put(String.valueOf(e.getKey()), median(fractions.get(e.getKey())));
                }
                if (perBatch.containsKey(1)) {
                    // Per repeat, each run against the bandwidth probed right before it: the two runs
                    // of a pair happen at different moments of a machine whose speed drifts. Without a
                    // host probe, the plain ratio of the pair's tokens/s.
                    List<Double> ratios = new ArrayList<>();
                    for (int r = 0; r < o.repeats(); r++) {
                        ratios.add(hostMemory ? e.getKey() * fractions.get(e.getKey()).get(r) / fractions.get(1).get(r)
                                : e.getValue().get(r) / perBatch.get(1).get(r));
                    }
                    speedup.put(String.valueOf(e.getKey()), median(ratios));
                }
            }
            peakPages = engine.decodePool().peakUsedPages();
        } finally {
            probe.close();
            probePool.close();
        }
        double readGBs = median(bandwidths);
        // For context only (fractions use the all-threads figure above): what one core alone can
        // read. On machines whose bandwidth is bound per core, as here, that is about half.
        double oneThreadGBs = Double.NaN;
        if (hostMemory) {
            try (Parallel one = new Parallel(1); Bandwidth.Probe p = new Bandwidth.Probe(1L << 30)) {
                oneThreadGBs = p.best(one, 3);
            }
        }
        Map<String, Object> safety = o.safetyPairs() > 0 ? compareSafety(model, o, cfg, rnd, progress) : null;
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("model", model.source() == null ? "memory" : model.source().getFileName().toString());
        json.put("format", model.format());
        json.put("parameters", c.parameterCount());
        json.put("backend", backendName);
        json.put("threads", threads);
        json.put("cores", Runtime.getRuntime().availableProcessors());
        json.put("prompt_tokens", o.promptTokens());
        json.put("gen_tokens", o.genTokens());
        json.put("repeats", o.repeats());
        json.put("weight_bytes_per_token", weightBytes);
        if (hostMemory) {
            json.put("mem_read_gbs", readGBs);
            json.put("mem_read_gbs_per_run", bandwidths);
            json.put("mem_read_gbs_one_thread", oneThreadGBs);
        }
        json.put("prefill_tok_s", prefill);
        json.put("decode_tok_s", decode);
        if (hostMemory) {
            json.put("decode_weight_bandwidth_fraction", fraction);
        }
        if (!speedup.isEmpty()) {
            json.put("decode_speedup_vs_batch1", speedup);
        }
        json.put("peak_kv_pages", peakPages);
        if (safety != null) {
            json.put("compare_safety", safety);
        }
        json.put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
        return json;
    }

    /**
     * Decode throughput with every safety check on (read-side tag and written-slot checks, handoff
     * verification) against all of them off, alternating the two engines in one process so that
     * machine noise hits both alike; one ratio per pair, on/off.
     */
    /** The engine with every safety check off, observing nothing: the baseline that prices the checks. */
    private static final FaultHooks CHECKS_OFF = new FaultHooks() {
        @Override
        public boolean checksOn() {
            return false;
        }

        @Override
        public boolean observesSteps() {
            return false;
        }
    };

    private static Map<String, Object> compareSafety(LoadedModel model, Options o, EngineConfig base, SplittableRandom rnd,
                                                     PrintStream progress) throws Exception {
        int batch = o.batches().stream().mapToInt(Integer::intValue).max().orElseThrow();
        Recorder onRec = new Recorder();
        Recorder offRec = new Recorder();
        List<Double> ratios = new ArrayList<>();
        List<Double> onTokS = new ArrayList<>();
        List<Double> offTokS = new ArrayList<>();
        try (Engine on = Engine.builder(model, base).metrics(onRec).build(); Engine offEngine = Engine.builder(model, base).metrics(offRec)
                .faultHooks(CHECKS_OFF).build()) {
            runBatch(on, model.config(), o.promptTokens(), Math.min(o.genTokens(), 16), batch, rnd); // warm-up both
            runBatch(offEngine, model.config(), o.promptTokens(), Math.min(o.genTokens(), 16), batch, rnd);
            ProgressBar bar = ProgressBar.steps(progress, "compare safety", o.safetyPairs());
            for (int i = 0; i < o.safetyPairs(); i++) {
                // alternate which goes first, so a drift in machine speed favours neither
                boolean onFirst = i % 2 == 0;
                double a = measure(onFirst ? on : offEngine, onFirst ? onRec : offRec, model, o, batch, rnd);
                double b = measure(onFirst ? offEngine : on, onFirst ? offRec : onRec, model, o, batch, rnd);
                double onV = onFirst ? a : b;
                double offV = onFirst ? b : a;
                onTokS.add(onV);
                offTokS.add(offV);
                ratios.add(onV / offV);
                bar.accept(i + 1);
            }
        }
        List<Double> sorted = ratios.stream().sorted().toList();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("batch", batch);
        m.put("pairs", ratios.size());
        m.put("median_ratio", median(ratios));
        m.put("min_ratio", sorted.getFirst());
        m.put("max_ratio", sorted.getLast());
        m.put("ratios", ratios);
        m.put("on_tok_s", onTokS);
        m.put("off_tok_s", offTokS);
        return m;
    }

    private static double measure(Engine engine, Recorder rec, LoadedModel model, Options o, int batch, SplittableRandom rnd)
            throws Exception {
        rec.reset();
        runBatch(engine, model.config(), o.promptTokens(), o.genTokens(), batch, rnd);
        return rec.decodeTokS(batch);
    }

    /** Submits {@code batch} random prompts at once and waits for all; decode steps at full batch are what we measure. */
    private static void runBatch(Engine engine, ModelConfig c, int promptTokens, int gen, int batch, SplittableRandom rnd)
            throws Exception {
        List<RequestHandle> handles = new ArrayList<>();
        for (int i = 0; i < batch; i++) {
            int[] prompt = new int[promptTokens];
            prompt[0] = 1;
            for (int t = 1; t < promptTokens; t++) {
                prompt[t] = 3 + rnd.nextInt(c.vocabSize() - 3);
            }
            handles.add(engine.submit(new GenerationRequest("bench", prompt, gen,
                    new SamplingParams(0f, 1f, 0, true)), TokenListener.NONE));
        }
        for (RequestHandle h : handles) {
            h.result().get(30, TimeUnit.MINUTES);
        }
    }

    static double median(List<Double> xs) {
        double[] a = xs.stream().mapToDouble(Double::doubleValue).filter(Double::isFinite).sorted().toArray();
        if (a.length == 0) {
            return Double.NaN;
        }
        return a.length % 2 == 1 ? a[a.length / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
    }

    private EngineBench() {
    }
}
