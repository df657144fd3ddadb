package dev.pagewarden.lab;

import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.engine.EngineConfig;
import dev.pagewarden.core.lineage.LineageSink;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.receipt.ReceiptSigner;
import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.RequestState;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.core.safety.SafetyEvent;
import dev.pagewarden.core.spi.Clock;
import dev.pagewarden.core.spi.EngineMetrics;
import dev.pagewarden.core.tokenizer.Tokenizer;
import dev.pagewarden.core.grammar.GrammarConstraints;
import dev.pagewarden.core.grammar.JsonGrammar;

import java.time.Instant;
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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The incident-replay lab: a seeded multi-tenant workload - normal prompts, prompts over the pool
 * capacity, aborts during transfer - run once per scenario of fault switches, each fault scenario
 * twice (detectors on, and detectors off as {@code <name>-undetected}). Ground truth comes from the
 * {@link IsolationOracle} (who really wrote each slot a request read), and from comparing every
 * delivered output with the same request run alone on a fresh, clean engine.
 *
 * <p>The engine runs stepped on a virtual clock, and the transfer delays are counted in decode
 * steps: a scenario's result is the same on every run for a seed, on an idle or a loaded machine.
 */
public final class ReplayLab {

    /** One reader of another tenant's data and one request whose bytes it read, as the oracle saw them. */
    public record ForeignRead(long reader, String readerTenant, long writer, String writerTenant) {
    }

    /**
     * A named set of fault switches. {@code pagesOnDemand}: requests reserve their prompt's decode pages plus a
     * headroom and a small decode pool runs out, so running requests are preempted and re-prefilled; otherwise
     * every request reserves prompt + max new tokens at admission. {@code prefixCache}: the engine keeps and
     * reuses prompt pages per scope, and the workload is the prefix cache rounds (tenants' system prompts).
     */
    public record Scenario(String name, LabFaults faults, boolean pagesOnDemand, boolean prefixCache) {
        public Scenario(String name, LabFaults faults) {
            this(name, faults, false);
        }

        public Scenario(String name, LabFaults faults, boolean pagesOnDemand) {
            this(name, faults, pagesOnDemand, false);
        }
    }

    /** What one scenario did; field names are those of the JSON report. */
    public record Result(String name, List<String> faults, int submitted, int served, int rejected, int aborted,
                         int failed, int outputMismatches, long crossTenantReads, int exposedRequests,
                         int detectedRequests, int undetectedExposedRequests, Map<String, Integer> detectors,
                         int overCapacitySubmitted, int overCapacityRejected, boolean poolsFreeAtEnd,
                         List<String> foreignContent, List<Long> crossTenantReaders, boolean pagesOnDemand,
                         int preemptions, List<ForeignRead> foreignReads, boolean prefixCache,
                         long reusedPromptTokens) {

        /** The oracle's pairs (sorted by reader, then writer); not in the JSON report, whose shape stays as it is. */
        public Result {
            foreignReads = List.copyOf(foreignReads);
        }

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
            if (pagesOnDemand) { // only these scenarios can preempt
                m.put("preemptions", preemptions);
            }
            if (prefixCache) { // only these scenarios reuse cached pages
                m.put("reused_prompt_tokens", reusedPromptTokens);
            }
            return m;
        }
    }

    static final int PAGE_TOKENS = 16;
    static final int PREFILL_POOL_TOKENS = 192;
    static final int DECODE_POOL_TOKENS = 1024;
    static final int WINDOW = 192;
    static final int MISCONFIGURED_WINDOW = 320;
    /** The decode pool of the preemption scenario: a little over one window, far less than its requests grow to. */
    static final int PREEMPTION_DECODE_POOL_TOKENS = 256;
    /** The prefill pool of the prefix cache scenarios: room for every tenant's cached system prompt and more. */
    static final int PREFIX_PREFILL_POOL_TOKENS = 512;
    /** Decode steps each frame of the abort scenario waits: its last frames land after other tenants' requests took the pages. */
    static final int TRANSFER_DELAY_STEPS = 20;
    /** No scenario needs more steps than this; more means the engine stalled. */
    static final int MAX_STEPS = 200_000;
    /** Rounds of abort-during-transfer, one per aborting tenant and order. */
    static final List<String> ABORTERS = List.of("acme", "initech", "globex", "umbrella", "acme", "globex", "initech",
            "umbrella");

    public static List<Scenario> scenarios() {
        List<Scenario> base = List.of(
                new Scenario("incident-2026", LabFaults.parse(List.of("skip-capacity-check", "legacy-finished-check"))),
                new Scenario("abort-during-transfer", LabFaults.parse(List.of("immediate-release-on-abort",
                        "delay-transfer-writes=" + TRANSFER_DELAY_STEPS))),
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
        // no fault: the engine's own preemption under a full decode pool, with transfers in flight and aborted
        // requests' late writes landing in their deferred pages, must expose nobody and change no output
        all.add(new Scenario("preemption", LabFaults.parse(List.of("delay-transfer-writes=" + TRANSFER_DELAY_STEPS)), true));
        // no fault: heavy reuse of cached prompt pages inside each tenant's scopes must expose nobody, though two
        // tenants send the same system prompt; then a lookup that ignores the scope, caught by the read check
        all.add(new Scenario("prefix-reuse", LabFaults.NONE, false, true));
        all.add(new Scenario("prefix-cross-scope", LabFaults.parse(List.of(Fault.IGNORE_CACHE_SCOPE.label())), false, true));
        all.add(new Scenario("prefix-cross-scope-undetected", LabFaults.parse(List.of(Fault.IGNORE_CACHE_SCOPE.label(),
                Fault.DETECTORS_OFF.label())), false, true));
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
    private final long requestIdBase;
    private final Map<String, int[]> references = new HashMap<>();

    public ReplayLab(LoadedModel model, long seed) {
        this(model, seed, 0);
    }

    /**
     * A lab whose engines number requests from {@code requestIdBase} + 1, as a platform gives each engine start its
     * own block: runs of two labs with different bases are two starts whose lineage can share one database.
     */
    public ReplayLab(LoadedModel model, long seed, long requestIdBase) {
        if (model.vocabulary() == null) {
            throw new IllegalArgumentException("the replay lab needs a model with a vocabulary (pass --tokenizer)");
        }
        if (model.config().seqLen() < MISCONFIGURED_WINDOW) {
            throw new IllegalArgumentException("the replay lab needs a model context of at least "
                    + MISCONFIGURED_WINDOW + " tokens, this one has " + model.config().seqLen());
        }
        this.model = model;
        this.tokenizer = new Tokenizer(model.vocabulary());
        this.workload = new LabWorkload(text -> tokenizer.encode(text, true, false), model.tokenizer() == null ? null
                : new GrammarConstraints(model.tokenizer()).constraint(JsonGrammar.anyObject()));
        this.seed = seed;
        this.requestIdBase = requestIdBase;
    }

    /** The traffic this lab sends. */
    LabWorkload workload() {
        return workload;
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
        EngineConfig.Builder builder = EngineConfig.builder().backend("cpu").pageTokens(PAGE_TOKENS)
                .contextWindow(incident ? MISCONFIGURED_WINDOW : WINDOW).requestIdBase(requestIdBase);
        EngineConfig cfg = scenario.pagesOnDemand()
                ? builder.poolTokens(PREFILL_POOL_TOKENS, PREEMPTION_DECODE_POOL_TOKENS).decodeHeadroomPages(1).build()
                : builder.poolTokens(scenario.prefixCache() ? PREFIX_PREFILL_POOL_TOKENS : PREFILL_POOL_TOKENS,
                        DECODE_POOL_TOKENS).decodeHeadroomPages(EngineConfig.FULL_RESERVATION)
                        .prefixCache(scenario.prefixCache()).build();
        AtomicInteger preemptions = new AtomicInteger();
        AtomicLong reusedTokens = new AtomicLong();
        EngineMetrics metrics = new EngineMetrics() {
            @Override
            public void preemption(String outcome) {
                preemptions.incrementAndGet();
            }

            @Override
            public void prefixCacheLookup(int hitTokens, int missTokens) {
                reusedTokens.addAndGet(hitTokens);
            }
        };
        List<SafetyEvent> events = new CopyOnWriteArrayList<>();
        List<Submitted> submitted = new ArrayList<>();
        SplittableRandom rnd = new SplittableRandom(seed);
        IsolationOracle oracle = new IsolationOracle();
        StepClock clock = new StepClock(Instant.now());
        boolean free;
        try (Engine engine = Engine.builder(model, cfg).metrics(metrics).safety(events::add).lineage(lineage).clock(clock).receipts(signer)
                .faultHooks(scenario.faults().hooks(oracle)).stepped().build()) {
            if (scenario.prefixCache()) {
                submitted.addAll(prefixTraffic(engine, clock, rnd));
            } else {
                // 1. normal traffic from every tenant fills the decode pool's pages with their KV
                submitted.addAll(submitAll(engine, workload.normalWave(rnd, 3)));
                runUntilIdle(engine, clock);
                // 2. prompts over the pool capacity
                submitted.addAll(submitAll(engine, workload.overCapacityWave()));
                runUntilIdle(engine, clock);
                // 3. aborts while KV is in flight, each followed at once by other tenants' requests
                for (String aborter : ABORTERS) {
                    LabWorkload.Planned victimOf = workload.abortWave(aborter);
                    RequestHandle h = engine.submit(victimOf.request(victimOf.tenant()), TokenListener.NONE);
                    submitted.add(new Submitted(victimOf, h));
                    stepUntilPast(engine, clock, h, RequestState.Transferring.class);
                    h.abort("lab: client gone during transfer");
                    submitted.addAll(submitAll(engine, workload.victims(rnd, aborter)));
                    runUntilIdle(engine, clock);
                }
                // 4. more normal traffic on the pages that all of this left behind
                submitted.addAll(submitAll(engine, workload.normalWave(rnd, 1)));
                runUntilIdle(engine, clock);
            }
            // cached prefix pages stay in the prefill pool after their requests: free too
            free = engine.transfersInFlight() == 0 && engine.pools().stream()
                    .allMatch(p -> p.freePages() + p.cachedPages() == p.capacityPages());
        }
        return tally(scenario, submitted, events, free, served, oracle, preemptions.get(), reusedTokens.get());
    }

    /**
     * The prefix cache workload: normal traffic, the rounds of system prompts (each round after the last has
     * finished, so its pages are cached), then normal traffic again.
     */
    private List<Submitted> prefixTraffic(Engine engine, StepClock clock, SplittableRandom rnd) {
        List<Submitted> out = new ArrayList<>(submitAll(engine, workload.normalWave(rnd, 2)));
        runUntilIdle(engine, clock);
        for (int round = 0; round < LabWorkload.PREFIX_ROUNDS; round++) {
            out.addAll(submitAll(engine, workload.prefixWave(round)));
            runUntilIdle(engine, clock);
        }
        out.addAll(submitAll(engine, workload.normalWave(rnd, 1)));
        runUntilIdle(engine, clock);
        return out;
    }

    /** Steps the engine until nothing is under way (every request ended, every deferred page settled). */
    private static void runUntilIdle(Engine engine, StepClock clock) {
        for (int i = 0; i < MAX_STEPS; i++) {
            clock.step();
            if (!engine.step()) {
                return;
            }
        }
        throw new IllegalStateException("the lab's engine is still busy after " + MAX_STEPS + " steps");
    }

    /** Steps the engine until a request is in a state (the lab aborts there), or past it. */
    private static void stepUntilPast(Engine engine, StepClock clock, RequestHandle h, Class<? extends RequestState> target) {
        for (int i = 0; i < MAX_STEPS; i++) {
            if (target.isInstance(h.state()) || h.state().isTerminal() || h.state() instanceof RequestState.Ready
                    || h.state() instanceof RequestState.Decoding) {
                return;
            }
            clock.step();
            engine.step();
        }
        throw new IllegalStateException("lab request " + h.id() + " never reached " + target.getSimpleName());
    }

    private List<Submitted> submitAll(Engine engine, List<LabWorkload.Planned> plans) {
        List<Submitted> out = new ArrayList<>();
        for (LabWorkload.Planned p : plans) {
            out.add(new Submitted(p, engine.submit(p.request(p.tenant()), TokenListener.NONE)));
        }
        return out;
    }

    private Result tally(Scenario scenario, List<Submitted> submitted, List<SafetyEvent> events, boolean free,
                         Consumer<GenerationResult> servedResults, IsolationOracle oracle, int preemptions,
                         long reusedTokens)
            throws InterruptedException {
        LabTally tally = new LabTally(oracle);
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
                tally.undetectedExposed(), detectors, overCap, overCapRejected, free, foreign, tally.crossTenantReaders(),
                scenario.pagesOnDemand(), preemptions, foreignReads(oracle, tally.crossTenantReaders()),
                scenario.prefixCache(), reusedTokens);
    }

    private static List<ForeignRead> foreignReads(IsolationOracle oracle, List<Long> readers) {
        List<ForeignRead> out = new ArrayList<>();
        for (long reader : readers.stream().sorted().toList()) {
            for (long writer : oracle.foreignWriters(reader).stream().sorted().toList()) {
                out.add(new ForeignRead(reader, oracle.tenantOf(reader), writer, oracle.tenantOf(writer)));
            }
        }
        return out;
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
        String key = p.tenant() + Arrays.toString(p.prompt()) + "/" + p.maxNew() + "/" + p.sampling();
        int[] cached = references.get(key);
        if (cached != null) {
            return cached;
        }
        EngineConfig clean = EngineConfig.builder().backend("cpu").pageTokens(PAGE_TOKENS).build();
        try (Engine e = Engine.builder(model, clean).build()) {
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
