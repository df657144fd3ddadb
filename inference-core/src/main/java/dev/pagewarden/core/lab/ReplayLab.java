package dev.pagewarden.core.lab;

import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.receipt.ReceiptSigner;
import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.safety.SafetyEvent;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.spi.LineageSink;
import dev.pagewarden.core.tokenizer.Tokenizer;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The incident-replay lab: a seeded multi-tenant workload - normal prompts, prompts over the pool
 * capacity, aborts during transfer - run once per scenario of fault switches, each fault scenario
 * twice (detectors on, and detectors off as {@code <name>-undetected}). Ground truth comes from the
 * pools' own bookkeeping of who wrote each slot, and from comparing every delivered output with the
 * same request run alone on a fresh, clean engine.
 */
public final class ReplayLab {

    /** A named set of fault switches. */
    public record Scenario(String name, LabFaults faults) {
    }

    /** What one scenario did; field names are those of the JSON report. */
    public record Result(String name, List<String> faults, int submitted, int served, int rejected, int aborted,
                         int failed, int outputMismatches, long crossTenantReads, int exposedRequests,
                         int detectedRequests, int undetectedExposedRequests, Map<String, Integer> detectors,
                         int overCapacitySubmitted, int overCapacityRejected, boolean poolsFreeAtEnd,
                         List<String> foreignContent, List<Long> crossTenantReaders) {

        public Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", name);
            m.put("faults", faults);
            m.put("submitted", submitted);
            m.put("served", served);
            m.put("rejected", rejected);
            m.put("aborted", aborted);
            m.put("failed", failed);
            m.put("output_mismatches", outputMismatches);
            m.put("cross_tenant_reads", crossTenantReads);
            m.put("exposed_requests", exposedRequests);
            m.put("detected_requests", detectedRequests);
            m.put("undetected_exposed_requests", undetectedExposedRequests);
            m.put("detectors", detectors);
            m.put("over_capacity_submitted", overCapacitySubmitted);
            m.put("over_capacity_rejected", overCapacityRejected);
            m.put("pools_free_at_end", poolsFreeAtEnd);
            m.put("foreign_content", foreignContent);
            m.put("cross_tenant_reader_ids", crossTenantReaders);
            return m;
        }
    }

    static final int PAGE_TOKENS = 16;
    static final int PREFILL_POOL_TOKENS = 192;
    static final int DECODE_POOL_TOKENS = 1024;
    static final int WINDOW = 192;
    static final int MISCONFIGURED_WINDOW = 320;
    /** Rounds of abort-during-transfer; the race is timing-dependent, so the lab tries it several times. */
    static final List<String> ABORTERS = List.of("acme", "initech", "globex", "umbrella", "acme", "globex", "initech",
            "umbrella");

    public static List<Scenario> scenarios() {
        List<Scenario> base = List.of(
                new Scenario("incident-2026", LabFaults.parse(List.of("skip-capacity-check", "legacy-finished-check"))),
                new Scenario("abort-during-transfer", LabFaults.parse(List.of("immediate-release-on-abort",
                        "delay-transfer-writes=20"))),
                new Scenario("drop-transfer-page", LabFaults.parse(List.of("drop-transfer-page"))),
                new Scenario("corrupt-transfer-byte", LabFaults.parse(List.of("corrupt-transfer-byte"))));
        List<Scenario> all = new ArrayList<>();
        all.add(new Scenario("clean", LabFaults.NONE));
        for (Scenario s : base) {
            all.add(s);
            List<String> off = new ArrayList<>(s.faults().labels());
            off.add(Fault.DETECTORS_OFF.label());
            all.add(new Scenario(s.name() + "-undetected", LabFaults.parse(off)));
        }
        return all;
    }

    public static Scenario scenario(String name) {
        return scenarios().stream().filter(s -> s.name().equals(name)).findFirst().orElseThrow(() ->
                new IllegalArgumentException("unknown scenario '" + name + "'; known: "
                        + scenarios().stream().map(Scenario::name).toList() + " and all"));
    }

    private final LoadedModel model;
    private final Tokenizer tokenizer;
    private final LabWorkload workload;
    private final long seed;
    private final Map<String, int[]> references = new HashMap<>();

    public ReplayLab(LoadedModel model, long seed) {
        if (model.vocabulary() == null) {
            throw new IllegalArgumentException("the replay lab needs a model with a vocabulary (pass --tokenizer)");
        }
        if (model.config().seqLen() < MISCONFIGURED_WINDOW) {
            throw new IllegalArgumentException("the replay lab needs a model context of at least "
                    + MISCONFIGURED_WINDOW + " tokens, this one has " + model.config().seqLen());
        }
        this.model = model;
        this.tokenizer = new Tokenizer(model.vocabulary());
        this.workload = new LabWorkload(tokenizer);
        this.seed = seed;
    }

    private static final class Submitted {
        final LabWorkload.Planned plan;
        final RequestHandle handle;

        Submitted(LabWorkload.Planned plan, RequestHandle handle) {
            this.plan = plan;
            this.handle = handle;
        }
    }

    public Result run(Scenario scenario) throws InterruptedException {
        return run(scenario, LineageSink.NONE);
    }

    /** Runs a scenario with every page life step going to {@code lineage} (the audit can then be checked against the ground truth). */
    public Result run(Scenario scenario, LineageSink lineage) throws InterruptedException {
        return run(scenario, lineage, null, r -> { });
    }

    /**
     * As {@link #run(Scenario, LineageSink)}, with receipts signed by {@code signer} (null: none);
     * every served request's result goes to {@code served} (in submission order, after the run).
     */
    public Result run(Scenario scenario, LineageSink lineage, ReceiptSigner signer, Consumer<GenerationResult> served)
            throws InterruptedException {
        boolean incident = scenario.faults().has(Fault.SKIP_CAPACITY_CHECK);
        EngineConfig cfg = EngineConfig.builder().backend("cpu").pageTokens(PAGE_TOKENS)
                .poolTokens(PREFILL_POOL_TOKENS, DECODE_POOL_TOKENS)
                .contextWindow(incident ? MISCONFIGURED_WINDOW : WINDOW)
                .lab(true, scenario.faults()).groundTruth(true).build();
        List<SafetyEvent> events = new CopyOnWriteArrayList<>();
        List<Submitted> submitted = new ArrayList<>();
        SplittableRandom rnd = new SplittableRandom(seed);
        boolean free;
        try (Engine engine = new Engine(model, cfg, EngineMetrics.NONE, events::add, lineage, Clock.SYSTEM, signer)) {
            // 1. normal traffic from every tenant fills the decode pool's pages with their KV
            submitted.addAll(submitAll(engine, workload.normalWave(rnd, 3)));
            awaitAll(submitted);
            // 2. prompts over the pool capacity
            submitted.addAll(submitAll(engine, workload.overCapacityWave()));
            awaitAll(submitted);
            // 3. aborts while KV is in flight, each followed at once by other tenants' requests
            for (String aborter : ABORTERS) {
                LabWorkload.Planned victimOf = workload.abortWave(aborter);
                RequestHandle h = engine.submit(victimOf.request(victimOf.tenant()), TokenListener.NONE);
                submitted.add(new Submitted(victimOf, h));
                awaitState(h, RequestState.Transferring.class);
                h.abort("lab: client gone during transfer");
                submitted.addAll(submitAll(engine, workload.victims(rnd, aborter)));
                awaitAll(submitted);
            }
            // 4. more normal traffic on the pages that all of this left behind
            submitted.addAll(submitAll(engine, workload.normalWave(rnd, 1)));
            awaitAll(submitted);
            free = settle(engine);
        }
        return tally(scenario, submitted, events, free, served);
    }

    private List<Submitted> submitAll(Engine engine, List<LabWorkload.Planned> plans) {
        List<Submitted> out = new ArrayList<>();
        for (LabWorkload.Planned p : plans) {
            out.add(new Submitted(p, engine.submit(p.request(p.tenant()), TokenListener.NONE)));
        }
        return out;
    }

    private static void awaitAll(List<Submitted> list) throws InterruptedException {
        for (Submitted s : list) {
            try {
                s.handle.result().get(2, TimeUnit.MINUTES);
            } catch (ExecutionException e) {
                // outcome is tallied from the state
            } catch (java.util.concurrent.TimeoutException e) {
                throw new IllegalStateException("lab request " + s.handle.id() + " did not finish: " + s.handle.state());
            }
        }
    }

    /** Waits (bounded) until a request reaches a state or passes it; the lab aborts there. */
    private static void awaitState(RequestHandle h, Class<? extends RequestState> target) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!target.isInstance(h.state()) && !h.state().isTerminal() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
            if (h.state() instanceof RequestState.Ready || h.state() instanceof RequestState.Decoding) {
                return; // the transfer was already over: abort where it is
            }
        }
    }

    /** Waits (bounded) for deferred releases and quarantines to settle; true when both pools are all free. */
    private static boolean settle(Engine engine) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            if (engine.transfersInFlight() == 0 && allFree(engine.prefillPool()) && allFree(engine.decodePool())) {
                return true;
            }
            Thread.sleep(5);
        }
        return false;
    }

    private static boolean allFree(KvPool pool) {
        return pool.freePages() == pool.capacityPages();
    }

    private Result tally(Scenario scenario, List<Submitted> submitted, List<SafetyEvent> events, boolean free,
                         Consumer<GenerationResult> servedResults)
            throws InterruptedException {
        LabTally tally = new LabTally();
        int mismatches = 0;
        int overCap = 0;
        int overCapRejected = 0;
        List<String> foreign = new ArrayList<>();
        for (Submitted s : submitted) {
            RequestHandle h = s.handle;
            if (s.plan.overCapacity()) {
                overCap++;
            }
            LabTally.Outcome outcome = tally.add(h);
            if (outcome.kind() == LabTally.Kind.REJECTED && s.plan.overCapacity()) {
                overCapRejected++;
            }
            if (outcome.kind() != LabTally.Kind.SERVED) {
                continue;
            }
            GenerationResult r = outcome.result();
            servedResults.accept(r);
            int[] ref = reference(s.plan);
            if (!Arrays.equals(r.outputTokens(), ref)) {
                mismatches++;
                if (outcome.exposed() && foreign.size() < 3) {
                    String got = tokenizer.decode(r.outputTokens()).strip().replace('\n', ' ');
                    String alone = tokenizer.decode(ref).strip().replace('\n', ' ');
                    String own = tokenizer.decode(s.plan.prompt()) + " " + alone;
                    String leak = foreignContent(s.plan.tenant(), got, own, tenantText(submitted));
                    foreign.add(s.plan.tenant() + " request " + h.id() + (leak.isEmpty() ? "" : " got " + leak)
                            + ": delivered \"" + got + "\"; alone it gives \"" + alone + "\"");
                }
            }
        }
        Map<String, Integer> detectors = new TreeMap<>();
        for (SafetyEvent e : events) {
            detectors.merge(e.type().label(), 1, Integer::sum);
        }
        return new Result(scenario.name(), scenario.faults().labels(), submitted.size(), tally.served(), tally.rejected(),
                tally.aborted(), tally.failed(), mismatches, tally.crossTenantReads(), tally.exposed(), tally.detected(),
                tally.undetectedExposed(), detectors, overCap, overCapRejected, free, foreign, tally.crossTenantReaders());
    }

    /**
     * The longest stretch (at least 12 characters) of a delivered output that appears in another
     * tenant's prompt or isolated output but not in the request's own prompt or isolated output -
     * another customer's content, verbatim. Empty if there is none.
     */
    private static String foreignContent(String tenant, String delivered, String ownText, Map<String, String> othersText) {
        String best = "";
        String from = "";
        for (Map.Entry<String, String> other : othersText.entrySet()) {
            if (other.getKey().equals(tenant)) {
                continue;
            }
            for (int i = 0; i < delivered.length(); i++) {
                for (int j = delivered.length(); j - i > Math.max(best.length(), 11); j--) {
                    String piece = delivered.substring(i, j);
                    if (other.getValue().contains(piece) && !ownText.contains(piece)) {
                        best = piece;
                        from = other.getKey();
                        break;
                    }
                }
            }
        }
        return best.isEmpty() ? "" : "\"" + best.strip() + "\" from tenant " + from;
    }

    /** Per tenant: its prompts and their isolated outputs, as text. */
    private Map<String, String> tenantText(List<Submitted> submitted) throws InterruptedException {
        Map<String, String> text = new HashMap<>();
        for (Submitted s : submitted) {
            String t = tokenizer.decode(s.plan.prompt()) + " " + tokenizer.decode(reference(s.plan));
            text.merge(s.plan.tenant(), t, (a, b) -> a + " | " + b);
        }
        return text;
    }

    /** The request's output alone on a fresh, clean engine (cached per distinct request). */
    private int[] reference(LabWorkload.Planned p) throws InterruptedException {
        String key = p.tenant() + Arrays.toString(p.prompt()) + "/" + p.maxNew();
        int[] cached = references.get(key);
        if (cached != null) {
            return cached;
        }
        EngineConfig clean = EngineConfig.builder().backend("cpu").pageTokens(PAGE_TOKENS).build();
        try (Engine e = new Engine(model, clean, EngineMetrics.NONE)) {
            int[] out = e.submit(p.request(p.tenant()), TokenListener.NONE).result().get(2, TimeUnit.MINUTES).outputTokens();
            references.put(key, out);
            return out;
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("isolated reference run failed: " + e.getMessage(), e);
        }
    }

    /** A one-line summary per scenario, for the table. */
    public static String row(Result r) {
        return String.format(Locale.ROOT, "%-32s %6d %6d %6d %6d %6d %8d %8d %8d %8d  %s", r.name(), r.served(),
                r.rejected(), r.aborted(), r.failed(), r.outputMismatches(), r.crossTenantReads(), r.exposedRequests(),
                r.detectedRequests(), r.undetectedExposedRequests(), r.detectors());
    }

    public static String header() {
        return String.format(Locale.ROOT, "%-32s %6s %6s %6s %6s %6s %8s %8s %8s %8s  %s", "scenario", "served", "reject",
                "abort", "failed", "mism", "x-reads", "exposed", "detected", "undet-ex", "detectors");
    }
}
