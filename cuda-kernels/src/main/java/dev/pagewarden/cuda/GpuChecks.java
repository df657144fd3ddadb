package dev.pagewarden.cuda;

import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.backend.BackendOptions;
import dev.pagewarden.core.backend.BackendProvider;
import dev.pagewarden.core.backend.Backends;
import dev.pagewarden.core.backend.SequenceStep;
import dev.pagewarden.core.fault.FaultHooks;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.kv.KvStorage;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.kv.ReadCheck;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.Tensor;
import dev.pagewarden.core.model.gguf.RowEncoder;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.safety.SafetyEvent;
import dev.pagewarden.core.step.StepGuard;
import dev.pagewarden.core.transfer.InProcessKvTransport;
import jcuda.driver.CUdeviceptr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The GPU checks, shared by the {@code gpu-check} command (run on the device machine) and the JUnit
 * GPU tests: logits parity against the CPU backend, greedy token equality, batch invariance, the
 * in-kernel tag and written-slot checks, the writer shadow, the device checksum, scrub. Each returns
 * plain numbers and booleans; the callers decide pass or fail.
 *
 * <p>Steps run as the engine runs them, through a {@link StepGuard} (host read checks before, writes
 * recorded after); only the checks of the in-kernel refusals call the backend directly, so that the
 * kernels are the only line of defence there.
 */
public final class GpuChecks {
    private static final int PAGE_TOKENS = 16;

    private GpuChecks() {
    }

    /** Largest |gpu - cpu| over the largest |cpu| (logits are of order ten; per-element ratios blow up near zero). */
    public static double relError(float[] gpu, float[] cpu) {
        double maxDiff = 0;
        double maxRef = 0;
        for (int i = 0; i < cpu.length; i++) {
            maxDiff = Math.max(maxDiff, Math.abs((double) gpu[i] - cpu[i]));
            maxRef = Math.max(maxRef, Math.abs(cpu[i]));
        }
        return maxRef == 0 ? maxDiff : maxDiff / maxRef;
    }

    /** Logits of {@code tokens} run through a backend: the first {@code prefill} as one chunk, then one per step. */
    public static List<float[]> logits(Backend backend, int[] tokens, int prefill) {
        ModelConfig c = backend.config();
        KvLayout layout = KvLayout.of(c, PAGE_TOKENS);
        try (var storage = backend.allocateKv(layout, layout.pagesFor(tokens.length))) {
            StepGuard guard = guard(backend, new KvPool("check", storage));
            List<PageRef> pages = guard.pool().allocate(7, "t", layout.pagesFor(tokens.length));
            List<float[]> out = new ArrayList<>();
            out.add(step(guard, c.vocabSize(), new SequenceStep(7, "t", Arrays.copyOf(tokens, prefill), 0, pages, true)));
            for (int p = prefill; p < tokens.length; p++) {
                out.add(step(guard, c.vocabSize(), new SequenceStep(7, "t", new int[] {tokens[p]}, p, pages, true)));
            }
            return out;
        }
    }

    /** The engine's way into a backend: host read checks before each step, its writes recorded after. */
    private static StepGuard guard(Backend backend, KvPool pool) {
        return new StepGuard(backend, pool, FaultHooks.NONE);
    }

    /** One step of one sequence through the guard; its logits (it must not be refused). */
    private static float[] step(StepGuard guard, int vocab, SequenceStep s) {
        float[][] l = {new float[vocab]};
        ReadCheck[] r = guard.forward(List.of(s), l, i -> { });
        if (!r[0].allowed()) {
            throw new IllegalStateException("a clean step was refused: " + r[0]);
        }
        return l[0];
    }

    /** Worst logits relative error of the GPU against the CPU backend over a prefill chunk and decode steps. */
    public static double parity(LoadedModel model, int[] tokens, int prefill) {
        return parity(Backends.select("gpu"), model, tokens, prefill);
    }

    /** As above for any backend against the CPU's (the CPU against itself must give 0: the check's own logic). */
    public static double parity(BackendProvider under, LoadedModel model, int[] tokens, int prefill) {
        List<float[]> gpu;
        List<float[]> cpu;
        try (Backend g = under.create(model, BackendOptions.defaults())) {
            gpu = logits(g, tokens, prefill);
        }
        try (Backend c = Backends.select("cpu").create(model, BackendOptions.defaults())) {
            cpu = logits(c, tokens, prefill);
        }
        double worst = 0;
        for (int i = 0; i < gpu.size(); i++) {
            worst = Math.max(worst, relError(gpu.get(i), cpu.get(i)));
        }
        return worst;
    }

    /**
     * The fused RoPE (rotations inside the KV append and the attention's Q load) against {@code pw_rope}:
     * the logits of a prefill chunk and decode steps through two GPU backends, one each way. Returns
     * the largest difference; the fused path does the same float operations, so it must be 0.
     */
    public static double fusedRopeDifference(LoadedModel model, int[] tokens, int prefill) {
        List<float[]> plain;
        List<float[]> fused;
        try (Backend g = Backends.select("gpu").create(model, BackendOptions.defaults())) {
            ((GpuBackend) g).fusedRope(false);
            plain = logits(g, tokens, prefill);
        }
        try (Backend g = Backends.select("gpu").create(model, BackendOptions.defaults())) {
            ((GpuBackend) g).fusedRope(true);
            fused = logits(g, tokens, prefill);
        }
        return maxDifference(plain, fused);
    }

    /**
     * CUDA graphs against launching every kernel: the largest logits differences and the graphs the run
     * captured (each capture is launched at once, so each one produced logits compared here). Counted over
     * the run, not held at its end: a step plan that outgrows its buffers drops the graphs held so far.
     */
    public record GraphChecks(double maxAbsDiff, double batchedMaxAbsDiff, int captured) {
    }

    /**
     * Logits through a GPU backend launching each kernel and through one replaying graphs: one sequence's
     * prefill chunk and decode steps (one shape, so from the second decode step on a graph runs), and
     * {@code batch} sequences of other lengths decoding together for {@code steps} steps (their page
     * tables grow across page boundaries while the shape stays). Both differences must be 0.
     */
    public static GraphChecks graphs(LoadedModel model, int[] tokens, int prefill, int batch, int steps) {
        List<float[]> plain;
        List<float[]> graphed;
        int captured;
        try (Backend g = Backends.select("gpu").create(model, BackendOptions.defaults())) {
            ((GpuBackend) g).graphs(false);
            plain = logits(g, tokens, prefill);
            plain.addAll(batchedDecode(g, batch, steps));
        }
        try (Backend g = Backends.select("gpu").create(model, BackendOptions.defaults())) {
            ((GpuBackend) g).graphs(true);
            graphed = logits(g, tokens, prefill);
            graphed.addAll(batchedDecode(g, batch, steps));
            captured = ((GpuBackend) g).capturedGraphs();
        }
        int single = tokens.length - prefill + 1;
        return new GraphChecks(maxDifference(plain.subList(0, single), graphed.subList(0, single)),
                maxDifference(plain.subList(single, plain.size()), graphed.subList(single, graphed.size())), captured);
    }

    /**
     * {@code batch} sequences (prompts of 3 + 5j random tokens) each prefilled in its own step, then
     * decoded together for {@code steps} steps on fixed random tokens; every step's logits in order.
     */
    static List<float[]> batchedDecode(Backend backend, int batch, int steps) {
        ModelConfig c = backend.config();
        KvLayout layout = KvLayout.of(c, PAGE_TOKENS);
        int longest = 3 + 5 * (batch - 1) + steps;
        if (longest > c.seqLen()) {
            throw new IllegalArgumentException(longest + " positions exceed the model's " + c.seqLen());
        }
        int perSeq = layout.pagesFor(longest);
        try (var storage = backend.allocateKv(layout, perSeq * batch)) {
            StepGuard guard = guard(backend, new KvPool("graphs", storage));
            List<float[]> out = new ArrayList<>();
            List<List<PageRef>> pages = new ArrayList<>();
            int[] pos = new int[batch];
            for (int j = 0; j < batch; j++) {
                pages.add(guard.pool().allocate(300 + j, "g", perSeq));
                int[] prompt = randomTokens(3 + 5 * j, c.vocabSize(), 300 + j);
                out.add(step(guard, c.vocabSize(), new SequenceStep(300 + j, "g", prompt, 0, pages.get(j), true)));
                pos[j] = prompt.length;
            }
            int[] feed = randomTokens(steps * batch, c.vocabSize(), 77);
            for (int t = 0; t < steps; t++) {
                List<SequenceStep> step = new ArrayList<>();
                for (int j = 0; j < batch; j++) {
                    step.add(new SequenceStep(300 + j, "g", new int[] {feed[t * batch + j]}, pos[j]++, pages.get(j), true));
                }
                float[][] l = new float[batch][c.vocabSize()];
                requireClean(guard.forward(step, l, i -> { }));
                out.addAll(Arrays.asList(l));
            }
            return out;
        }
    }

    /** Largest |a - b| over steps of logits (NaN, which compares false, counts as infinite). */
    static double maxDifference(List<float[]> a, List<float[]> b) {
        double worst = 0;
        for (int i = 0; i < a.size(); i++) {
            for (int v = 0; v < a.get(i).length; v++) {
                double d = Math.abs((double) a.get(i)[v] - b.get(i)[v]);
                worst = d == d ? Math.max(worst, d) : Double.POSITIVE_INFINITY;
            }
        }
        return worst;
    }

    /** Random token ids below the vocabulary, from a seed. */
    public static int[] randomTokens(int n, int vocab, long seed) {
        Random rnd = new Random(seed);
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = rnd.nextInt(vocab);
        }
        return t;
    }

    /** Greedy continuation, one sequence, through a backend directly; with the CPU's top-2 margin at each step. */
    public record Greedy(int[] tokens, double[] margins) {
    }

    public static Greedy greedy(Backend backend, int[] prompt, int maxNew) {
        ModelConfig c = backend.config();
        int total = Math.min(c.seqLen(), prompt.length + maxNew);
        KvLayout layout = KvLayout.of(c, PAGE_TOKENS);
        try (var storage = backend.allocateKv(layout, layout.pagesFor(total))) {
            StepGuard guard = guard(backend, new KvPool("greedy", storage));
            List<PageRef> pages = guard.pool().allocate(9, "t", layout.pagesFor(total));
            int[] out = new int[total - prompt.length];
            double[] margins = new double[out.length];
            float[] l = step(guard, c.vocabSize(), new SequenceStep(9, "t", prompt, 0, pages, true));
            for (int i = 0; i < out.length; i++) {
                int best = 0;
                for (int v = 1; v < l.length; v++) {
                    if (l[v] > l[best]) {
                        best = v;
                    }
                }
                double second = Double.NEGATIVE_INFINITY;
                for (int v = 0; v < l.length; v++) {
                    if (v != best) {
                        second = Math.max(second, l[v]);
                    }
                }
                out[i] = best;
                margins[i] = l[best] - second;
                int pos = prompt.length + i;
                if (i + 1 < out.length) {
                    l = step(guard, c.vocabSize(), new SequenceStep(9, "t", new int[] {best}, pos, pages, true));
                }
            }
            return new Greedy(out, margins);
        }
    }

    /**
     * Batch invariance: the logits of one sequence alone equal (bit for bit) its logits in a batch
     * with {@code neighbours} other sequences of other lengths. Returns the largest difference.
     */
    public static double batchInvariance(Backend backend, int[] tokens, int neighbours) {
        return batchInvariance(backend, tokens, neighbours, 11);
    }

    /** As above, the neighbours' lengths, tokens and the sequence's place in the batch drawn from {@code seed}. */
    public static double batchInvariance(Backend backend, int[] tokens, int neighbours, long seed) {
        ModelConfig c = backend.config();
        KvLayout layout = KvLayout.of(c, PAGE_TOKENS);
        int n = tokens.length;
        int perSeq = layout.pagesFor(n + neighbours + 1);
        try (var storage = backend.allocateKv(layout, perSeq * (neighbours + 2))) {
            KvPool pool = new KvPool("invariance", storage);
            StepGuard guard = guard(backend, pool);
            List<PageRef> alone = pool.allocate(1, "a", perSeq);
            float[] la = step(guard, c.vocabSize(), new SequenceStep(1, "a", tokens, 0, alone, true));
            List<SequenceStep> batch = new ArrayList<>();
            List<PageRef> mine = pool.allocate(2, "a", perSeq);
            Random rnd = new Random(seed);
            for (int j = 0; j < neighbours; j++) {
                List<PageRef> theirs = pool.allocate(100 + j, "b", perSeq);
                int[] other = randomTokens(1 + rnd.nextInt(n + neighbours), c.vocabSize(), 100 + j);
                batch.add(new SequenceStep(100 + j, "b", other, 0, theirs, true));
            }
            batch.add(rnd.nextInt(batch.size() + 1), new SequenceStep(2, "a", tokens, 0, mine, true));
            float[][] lb = new float[batch.size()][c.vocabSize()];
            requireClean(guard.forward(batch, lb, i -> { }));
            int at = 0;
            while (batch.get(at).requestId() != 2) {
                at++;
            }
            double worst = 0;
            for (int v = 0; v < c.vocabSize(); v++) {
                worst = Math.max(worst, Math.abs(la[v] - lb[at][v]));
            }
            return worst;
        }
    }

    /** The worst of {@link #batchInvariance} over 1..maxNeighbours neighbours, and where it was. */
    public record Sweep(int batches, double maxAbsDiff, int worstNeighbours) {
    }

    /**
     * Batch invariance over batch sizes: a sequence's logits alone against its logits among n random
     * neighbours (random lengths and tokens) at a random place, for every n from 1 to {@code maxNeighbours}
     * - with the tensor-core path that puts its rows at every offset of the 64-token blocks.
     */
    public static Sweep batchInvarianceSweep(Backend backend, int[] tokens, int maxNeighbours) {
        double worst = 0;
        int at = 0;
        for (int n = 1; n <= maxNeighbours; n++) {
            double d = batchInvariance(backend, tokens, n, 1000 + n);
            if (d > worst || at == 0) {
                worst = Math.max(worst, d);
                at = n;
            }
        }
        return new Sweep(maxNeighbours, worst, at);
    }

    /**
     * Batch invariance of a decode step: the logits of one sequence's single-token step alone equal
     * (bit for bit) its logits when that step runs beside {@code neighbours} other sequences' decode
     * steps (each after its own prefill, of other lengths, at a random place in the batch). Alone the
     * step has one token row, batched it has several - on the GPU that can be two different matvec
     * kernels, and this is what holds them to the same results. {@code tokens}: the sequence, its last
     * token the decoded one. Returns the largest difference.
     */
    public static double decodeInvariance(Backend backend, int[] tokens, int neighbours) {
        ModelConfig c = backend.config();
        KvLayout layout = KvLayout.of(c, PAGE_TOKENS);
        int n = tokens.length;
        // the longest neighbour has 2 + (n + neighbours - 1) tokens; every page table is sized for it
        int perSeq = layout.pagesFor(n + neighbours + 1);
        try (var storage = backend.allocateKv(layout, perSeq * (neighbours + 2))) {
            StepGuard guard = guard(backend, new KvPool("decode-invariance", storage));
            float[] alone = decodeAfterPrefill(guard, c.vocabSize(), 1, List.of(tokens), perSeq).getFirst();
            Random rnd = new Random(13);
            List<int[]> others = new ArrayList<>();
            for (int j = 0; j < neighbours; j++) {
                others.add(randomTokens(2 + rnd.nextInt(n + neighbours), c.vocabSize(), 200 + j));
            }
            int at = rnd.nextInt(neighbours + 1);
            others.add(at, tokens);
            List<float[]> batched = decodeAfterPrefill(guard, c.vocabSize(), 2, others, perSeq);
            double worst = 0;
            for (int v = 0; v < c.vocabSize(); v++) {
                worst = Math.max(worst, Math.abs(alone[v] - batched.get(at)[v]));
            }
            return worst;
        }
    }

    /**
     * Prefills each sequence but its last token, one at a time, then decodes every last token in one
     * step; returns the step's logits in order. Request ids from {@code firstId} on, 100 apart.
     */
    private static List<float[]> decodeAfterPrefill(StepGuard guard, int vocab, long firstId, List<int[]> seqs, int perSeq) {
        String tenant = "a";
        List<SequenceStep> steps = new ArrayList<>();
        for (int i = 0; i < seqs.size(); i++) {
            int[] t = seqs.get(i);
            long id = firstId + 100L * i;
            List<PageRef> pages = guard.pool().allocate(id, tenant, perSeq);
            step(guard, vocab, new SequenceStep(id, tenant, Arrays.copyOf(t, t.length - 1), 0, pages, true));
            steps.add(new SequenceStep(id, tenant, new int[] {t[t.length - 1]}, t.length - 1, pages, true));
        }
        float[][] logits = new float[steps.size()][vocab];
        requireClean(guard.forward(steps, logits, i -> { }));
        return Arrays.asList(logits);
    }

    private static void requireClean(ReadCheck[] verdicts) {
        for (ReadCheck check : verdicts) {
            if (!check.allowed()) {
                throw new IllegalStateException("a clean step was refused: " + check);
            }
        }
    }

    /**
     * What the in-kernel checks did with a stale epoch, an unwritten slot and a scrubbed page, with no
     * host checks before them (the backend called directly, not through the step guard).
     */
    public record TagChecks(ReadCheck.Violation staleEpoch, ReadCheck.Violation unwritten,
                            ReadCheck.Violation scrubbedRead, boolean neighbourUntouched, String details) {
    }

    public static TagChecks tagChecks(LoadedModel model, int[] tokens) {
        try (Backend b = Backends.select("gpu").create(model, BackendOptions.defaults())) {
            ModelConfig c = b.config();
            KvLayout layout = KvLayout.of(c, PAGE_TOKENS);
            int n = tokens.length;
            int pages = layout.pagesFor(n + 1);
            try (GpuKvStorage storage = (GpuKvStorage) b.allocateKv(layout, pages * 4)) {
                KvPool pool = new KvPool("tags", storage);
                List<PageRef> good = pool.allocate(1, "a", pages);
                List<PageRef> victim = pool.allocate(2, "b", pages);
                // the prefill goes through the guard, which records positions [0, n) as written
                float[][] l = new float[2][c.vocabSize()];
                requireClean(guard(b, pool).forward(List.of(new SequenceStep(1, "a", tokens, 0, good, true),
                        new SequenceStep(2, "b", tokens, 0, victim, true)), l, i -> { }));
                // from here on the backend is called directly: no host check, nothing recorded
                // 1. request 3 presents a page table naming request 2's pages with a stale epoch
                List<PageRef> stale = victim.stream().map(r -> new PageRef(r.page(), r.epoch() - 1)).toList();
                float[][] l2 = new float[2][c.vocabSize()];
                int next = tokens[0];
                ReadCheck[] r = b.forward(List.of(new SequenceStep(3, "c", new int[] {next}, n, stale, true),
                        new SequenceStep(1, "a", new int[] {next}, n, good, true)), storage, pool.tags(), l2);
                // the neighbour runs on: its logits equal (bit for bit) the same step run alone
                float[][] l3 = new float[1][c.vocabSize()];
                ReadCheck[] again = b.forward(List.of(new SequenceStep(1, "a", new int[] {next}, n, good, true)), storage,
                        pool.tags(), l3);
                boolean neighbourOk = r[1].allowed() && again[0].allowed() && Arrays.equals(l2[1], l3[0]);
                // 2. request 1 claims more history than it wrote: positions [0, n+1) with only n written
                ReadCheck[] u = b.forward(List.of(new SequenceStep(1, "a", new int[] {next}, n + 1, good, true)), storage,
                        pool.tags(), l3);
                // 3. request 2's pages scrubbed: their tags clear, any read of them is refused
                pool.quarantine(2, victim);
                for (PageRef p : victim) {
                    storage.scrubPage(p.page());
                }
                ReadCheck[] s = b.forward(List.of(new SequenceStep(2, "b", new int[] {next}, n, victim, true)), storage,
                        pool.tags(), l3);
                return new TagChecks(r[0].violation(), u[0].violation(), s[0].violation(), neighbourOk,
                        r[0].details() + " | " + u[0].details() + " | " + s[0].details());
            }
        }
    }

    /**
     * The writer shadow after one step of two sequences of different lengths: every slot of their
     * pages holds the id of the request whose step wrote it, 0 where nobody did (the rest of each last
     * page); a scrub of the first one's pages zeroes their shadow and leaves the second one's as it was.
     *
     * @param slotsWritten slots the step wrote (the shadow must name their writer)
     * @param wrong        slots, over both sequences' pages, whose shadow differed from the expectation
     * @param scrubZeroes  the first sequence's pages read all zeros after the scrub
     * @param neighbourKept the second sequence's shadow unchanged by that scrub
     */
    public record ShadowChecks(int slotsWritten, int wrong, boolean scrubZeroes, boolean neighbourKept) {
    }

    public static ShadowChecks writerShadow(Backend backend, int[] tokens) {
        ModelConfig c = backend.config();
        KvLayout layout = KvLayout.of(c, PAGE_TOKENS);
        int pageTokens = layout.pageTokens();
        int[] lengths = {tokens.length, Math.max(1, tokens.length - pageTokens / 2 - 1)};
        long[] ids = {21, 22};
        int perSeq = layout.pagesFor(tokens.length);
        try (KvStorage storage = backend.allocateKv(layout, 2 * perSeq)) {
            KvPool pool = new KvPool("shadow", storage);
            List<List<PageRef>> tables = new ArrayList<>();
            List<SequenceStep> batch = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                tables.add(pool.allocate(ids[i], "t" + i, perSeq));
                batch.add(new SequenceStep(ids[i], "t" + i, Arrays.copyOf(tokens, lengths[i]), 0, tables.get(i), false));
            }
            requireClean(guard(backend, pool).forward(batch, new float[2][], i -> { }));
            int written = 0;
            int wrong = 0;
            for (int i = 0; i < 2; i++) {
                for (int p = 0; p < perSeq; p++) {
                    long[] w = storage.writers(tables.get(i).get(p).page());
                    for (int slot = 0; slot < pageTokens; slot++) {
                        boolean wroteIt = p * pageTokens + slot < lengths[i];
                        written += wroteIt ? 1 : 0;
                        wrong += w[slot] != (wroteIt ? ids[i] : 0) ? 1 : 0;
                    }
                }
            }
            List<long[]> before = new ArrayList<>();
            for (PageRef ref : tables.get(1)) {
                before.add(storage.writers(ref.page()));
            }
            pool.quarantine(ids[0], tables.get(0));
            pool.scrubAndFree(ids[0], tables.get(0));
            boolean zero = true;
            for (PageRef ref : tables.get(0)) {
                zero &= Arrays.equals(storage.writers(ref.page()), new long[pageTokens]);
            }
            boolean kept = true;
            for (int p = 0; p < perSeq; p++) {
                kept &= Arrays.equals(storage.writers(tables.get(1).get(p).page()), before.get(p));
            }
            return new ShadowChecks(written, wrong, zero, kept);
        }
    }

    /** Device CRC32C against the host CRC32C of the same bytes (the transfer frame checksum), corruption, scrub. */
    public record ChecksumChecks(int pagesCompared, int mismatches, boolean corruptionDetected, boolean scrubZeroes) {
    }

    public static ChecksumChecks checksums(LoadedModel model, int[] tokens) {
        try (Backend b = Backends.select("gpu").create(model, BackendOptions.defaults())) {
            ModelConfig c = b.config();
            KvLayout layout = KvLayout.of(c, PAGE_TOKENS);
            int pages = layout.pagesFor(tokens.length);
            try (GpuKvStorage storage = (GpuKvStorage) b.allocateKv(layout, pages);
                 Arena arena = Arena.ofConfined()) {
                KvPool pool = new KvPool("crc", storage);
                List<PageRef> table = pool.allocate(1, "a", pages);
                requireClean(guard(b, pool).forward(List.of(new SequenceStep(1, "a", tokens, 0, table, false)), new float[1][],
                        i -> { }));
                MemorySegment host = arena.allocate(layout.pageBytes(), 64);
                int mismatches = 0;
                for (PageRef p : table) {
                    int device = storage.readPageWithChecksum(p.page(), host);
                    if (device != InProcessKvTransport.crc32c(host) || device != storage.checksum(p.page())) {
                        mismatches++;
                    }
                }
                int page = table.get(0).page();
                storage.readPage(page, host);
                int before = InProcessKvTransport.crc32c(host);
                host.set(ValueLayout.JAVA_BYTE, 3, (byte) (host.get(ValueLayout.JAVA_BYTE, 3) ^ 0x40));
                storage.writePage(page, host);
                boolean corrupt = storage.checksum(page) != before;
                storage.scrubPage(page);
                storage.readPage(page, host);
                boolean zero = true;
                for (long i = 0; i < layout.pageBytes(); i++) {
                    zero &= host.get(ValueLayout.JAVA_BYTE, i) == 0;
                }
                return new ChecksumChecks(table.size(), mismatches, corrupt, zero);
            }
        }
    }

    /**
     * One quantized type's tile decoder on the device against the CPU: {@code values} weights compared
     * (the padding rows must decode to zero as well), {@code mismatches} whose fp16 bits differ from
     * the CPU's decode rounded to fp16, the first of them described (null when none).
     */
    public record QuantDecode(DType type, long values, long mismatches, String first) {
    }

    /**
     * Weights as the engine's quantizer writes them, 37 rows (a padded last row tile) of four K-quant
     * super-blocks; each row at its own magnitude, from 1e-4 to 1, so that fp16 subnormals, ties and
     * the largest scales all occur.
     */
    public static Tensor quantizedSample(DType type, int rows, int cols, long seed) {
        Random rnd = new Random(seed);
        ByteBuffer buf = ByteBuffer.allocate((int) type.bytesFor((long) rows * cols)).order(ByteOrder.LITTLE_ENDIAN);
        float[] row = new float[cols];
        for (int r = 0; r < rows; r++) {
            double scale = Math.pow(10, -4 + 4.0 * r / Math.max(1, rows - 1));
            for (int c = 0; c < cols; c++) {
                row[c] = (float) (rnd.nextGaussian() * scale);
            }
            RowEncoder.encode(type, row, buf);
        }
        MemorySegment data = Arena.ofAuto().allocate(buf.capacity(), 64);
        data.copyFrom(MemorySegment.ofArray(buf.array()));
        return new Tensor("sample-" + type, type, rows, cols, data);
    }

    /**
     * Compares decoded tiles ({@code pw_unpack_tiles_*}'s output: [16 * rowTiles][cols] floats, each an
     * exact fp16) with the CPU's decode of {@code t} rounded to fp16, bit for bit.
     */
    public static QuantDecode compareDecoded(Tensor t, float[] decoded) {
        int rowsPadded = (t.rows() + 15) / 16 * 16;
        if (decoded.length != rowsPadded * t.cols()) {
            throw new IllegalArgumentException("decoded tiles hold " + decoded.length + " values, expected " + rowsPadded * t.cols());
        }
        float[] cpu = new float[t.cols()];
        long mismatches = 0;
        String first = null;
        for (int r = 0; r < rowsPadded; r++) {
            boolean padding = r >= t.rows();
            if (!padding) {
                t.rowInto(r, cpu, 0);
            }
            for (int c = 0; c < t.cols(); c++) {
                float got = decoded[r * t.cols() + c];
                short want = padding ? 0 : Float.floatToFloat16(cpu[c]);
                boolean same = padding ? got == 0.0f
                        : Float.floatToRawIntBits(got) == Float.floatToRawIntBits(Float.float16ToFloat(want));
                if (!same) {
                    if (first == null) {
                        first = String.format(java.util.Locale.ROOT, "W[%d][%d]: device %s, CPU decode %s -> fp16 %s", r, c, got,
                                padding ? "(padding)" : cpu[c], Float.float16ToFloat(want));
                    }
                    mismatches++;
                }
            }
        }
        return new QuantDecode(t.type(), (long) rowsPadded * t.cols(), mismatches, first);
    }

    /** Every tile decoder of {@code quant.cuh} on this GPU: all tiles of a sample per type, listed out of order. */
    public static List<QuantDecode> quantDecode() {
        CudaDevice d = CudaDevice.open();
        d.retain();
        try {
            List<QuantDecode> out = new ArrayList<>();
            for (DType type : QuantPacking.TYPES) {
                Tensor t = quantizedSample(type, 37, 1024, type.ordinal());
                out.add(compareDecoded(t, d.call(() -> unpackOnDevice(d, t))));
            }
            return out;
        } finally {
            d.release();
        }
    }

    /** Packs {@code t}, uploads it, runs its {@code pw_unpack_tiles_*} over every tile (shuffled), returns the floats. */
    private static float[] unpackOnDevice(CudaDevice d, Tensor t) {
        QuantPacking.Layout l = QuantPacking.layout(t.type(), t.rows(), t.cols());
        int n = l.rowTiles() * l.kTiles();
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            order.add(i);
        }
        java.util.Collections.shuffle(order, new Random(n));
        long outBytes = 4L * 16 * l.rowTiles() * t.cols();
        long tileBytes = 8L * n;
        CudaDevice.Pinned host = d.pinned(Math.max(outBytes, Math.max(tileBytes, l.bytes())));
        CUdeviceptr w = d.alloc(l.bytes());
        CUdeviceptr tiles = d.alloc(tileBytes);
        CUdeviceptr out = d.alloc(outBytes);
        try {
            QuantPacking.pack(t, 0, l.rowTiles(), host.segment());
            d.copyToDevice(w, host, 0, l.bytes());
            d.sync();
            for (int i = 0; i < n; i++) {
                int tile = order.get(i);
                host.segment().setAtIndex(ValueLayout.JAVA_INT_UNALIGNED, 2L * i, tile / l.kTiles());
                host.segment().setAtIndex(ValueLayout.JAVA_INT_UNALIGNED, 2L * i + 1, tile % l.kTiles());
            }
            d.copyToDevice(tiles, host, 0, tileBytes);
            d.zero(out, outBytes);
            d.launch(QuantPacking.unpackKernel(t.type()), (n + 7) / 8, 1, 256, 0, w, t.cols(), tiles, n, out);
            d.copyToHost(host, 0, out, outBytes);
            d.sync();
            float[] r = new float[(int) (outBytes / 4)];
            MemorySegment.copy(host.segment(), ValueLayout.JAVA_FLOAT_UNALIGNED, 0, r, 0, r.length);
            return r;
        } finally {
            d.sync();
            d.free(w);
            d.free(tiles);
            d.free(out);
            d.free(host);
        }
    }

    /** The decode results as an ordered map, for JSON: per type, values compared and mismatches. */
    public static Map<String, Object> asMap(List<QuantDecode> decode) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (QuantDecode q : decode) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("values", q.values());
            one.put("mismatches", q.mismatches());
            if (q.first() != null) {
                one.put("first_mismatch", q.first());
            }
            m.put(q.type().name().toLowerCase(java.util.Locale.ROOT), one);
        }
        return m;
    }

    /** The tag results as an ordered map, for JSON. */
    public static Map<String, Object> asMap(TagChecks t) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("tag_stale_epoch", String.valueOf(t.staleEpoch()));
        m.put("tag_unwritten_slot", String.valueOf(t.unwritten()));
        m.put("tag_scrubbed_read", String.valueOf(t.scrubbedRead()));
        m.put("tag_neighbour_untouched", t.neighbourUntouched());
        return m;
    }

    /** The writer shadow results as an ordered map, for JSON. */
    public static Map<String, Object> asMap(ShadowChecks s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("shadow_slots_written", s.slotsWritten());
        m.put("shadow_wrong_slots", s.wrong());
        m.put("shadow_scrub_zeroes", s.scrubZeroes());
        m.put("shadow_neighbour_kept", s.neighbourKept());
        return m;
    }

    /** The checksum results as an ordered map, for JSON. */
    public static Map<String, Object> asMap(ChecksumChecks c) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("checksum_pages", c.pagesCompared());
        m.put("checksum_mismatches", c.mismatches());
        m.put("checksum_corruption_detected", c.corruptionDetected());
        m.put("scrub_zeroes", c.scrubZeroes());
        return m;
    }
}
