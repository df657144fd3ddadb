package dev.pagewarden.platform.adminport;

import dev.pagewarden.core.engine.Engine;
import dev.pagewarden.core.lab.LabFaults;
import dev.pagewarden.core.lab.ReplayLab;
import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.GenerationResult;
import dev.pagewarden.core.request.RequestHandle;
import dev.pagewarden.core.request.SamplingParams;
import dev.pagewarden.core.request.TokenListener;
import dev.pagewarden.db.lineage.LineageShipper;
import dev.pagewarden.db.lineage.JournalingLineageSink;
import dev.pagewarden.platform.audit.RequestRecord;
import dev.pagewarden.platform.audit.RequestRecordRepository;
import dev.pagewarden.platform.audit.SafetyEventRecorder;
import dev.pagewarden.platform.config.PagewardenProperties;
import dev.pagewarden.platform.engine.EngineHost;
import dev.pagewarden.platform.engine.ServedModel;
import dev.pagewarden.platform.tenant.Tenant;
import dev.pagewarden.platform.tenant.TenantService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Runs an incident-replay scenario's workload through the RUNNING platform's engine (so its faults
 * are the platform's own {@code pagewarden.lab.faults}, its lineage goes through the platform's
 * journal into its PostgreSQL, and its requests get {@code requests} rows under real lab tenants).
 * The workload follows {@link ReplayLab}: normal traffic from four tenants, prompts over the pool
 * capacity, more normal traffic (the abort-during-transfer rounds are not replayed here). What it
 * returns is the engine's own ground truth (per-slot writer bookkeeping), for comparison only:
 * incidents and blast radius come from the detectors and the lineage queries.
 */
@Component
class LabReplayRunner {
    private static final Logger LOG = LoggerFactory.getLogger(LabReplayRunner.class);
    /** The lab's tenants and their stories (as in ReplayLab: each has its own hero, so leaks are visible in text). */
    static final Map<String, String> STORIES = new LinkedHashMap<>();
    static final int OVER_CAPACITY_PROMPT = 250;

    static {
        STORIES.put("lab-acme", "Once upon a time, there was a big dragon named Spark. Spark lived in a cave");
        STORIES.put("lab-globex", "One day, a little princess named Mia went to the sea with her red boat");
        STORIES.put("lab-initech", "Tom the cat had a shiny blue car. Every morning Tom drove the car to the farm");
        STORIES.put("lab-umbrella", "Sue and Ben found a magic tree in the garden. The tree had golden apples");
    }

    private final EngineHost host;
    private final TenantService tenants;
    private final RequestRecordRepository requests;
    private final PagewardenProperties properties;
    private final JournalingLineageSink lineage;
    private final LineageShipper shipper;
    private final SafetyEventRecorder safety;
    private final ReentrantLock oneAtATime = new ReentrantLock();

    LabReplayRunner(EngineHost host, TenantService tenants, RequestRecordRepository requests, PagewardenProperties properties,
                    JournalingLineageSink lineage, LineageShipper shipper, SafetyEventRecorder safety) {
        this.host = host;
        this.tenants = tenants;
        this.requests = requests;
        this.properties = properties;
        this.lineage = lineage;
        this.shipper = shipper;
        this.safety = safety;
    }

    Map<String, Object> run(String scenarioName) throws InterruptedException {
        if (!properties.lab().enabled()) {
            throw new IllegalStateException("the lab is off: start the platform with pagewarden.lab.enabled=true "
                    + "(never on a platform that serves tenants)");
        }
        ReplayLab.Scenario scenario = ReplayLab.scenario(scenarioName);
        LabFaults running = properties.lab().faults().isEmpty() ? LabFaults.NONE : LabFaults.parse(properties.lab().faults());
        if (!new HashSet<>(running.labels()).equals(new HashSet<>(scenario.faults().labels()))) {
            throw new IllegalArgumentException("scenario '" + scenarioName + "' needs lab faults " + scenario.faults().labels()
                    + " but this platform runs " + running.labels() + ": restart it with pagewarden.lab.faults="
                    + String.join(",", scenario.faults().labels()));
        }
        ServedModel served = host.served().orElseThrow(() -> new IllegalStateException("no model is loaded"));
        if (!oneAtATime.tryLock()) {
            throw new IllegalStateException("a replay is already running");
        }
        try {
            return replay(scenario, served);
        } finally {
            oneAtATime.unlock();
        }
    }

    private record Sent(String tenant, RequestHandle handle, int promptTokens, Instant received) {
    }

    private Map<String, Object> replay(ReplayLab.Scenario scenario, ServedModel served) throws InterruptedException {
        Map<String, String> ids = labTenants();
        Engine engine = served.engine();
        Instant started = Instant.now();
        List<Sent> sent = new ArrayList<>();
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(2026);
        sent.addAll(submit(engine, ids, normalWave(served, rnd, 3)));
        await(sent);
        sent.addAll(submit(engine, ids, overCapacityWave(served)));
        await(sent);
        sent.addAll(submit(engine, ids, normalWave(served, rnd, 1)));
        await(sent);
        List<RequestRecord> rows = new ArrayList<>();
        int ok = 0, rejected = 0, failed = 0, exposed = 0, detected = 0;
        List<Long> readers = new ArrayList<>();
        TreeSet<String> readerTenants = new TreeSet<>();
        for (Sent s : sent) {
            RequestHandle h = s.handle();
            if (h.crossTenantSlotsRead() > 0) {
                readers.add(h.id());
                readerTenants.add(s.tenant());
            }
            detected += h.detected() ? 1 : 0;
            String status;
            int generated = 0;
            String error = null;
            try {
                GenerationResult r = h.result().get();
                status = "FINISHED";
                generated = r.outputTokens().length;
                ok++;
                exposed += h.exposedTokens() > 0 ? 1 : 0;
            } catch (ExecutionException e) {
                boolean reject = e.getCause() instanceof dev.pagewarden.core.request.RequestRejectedException;
                status = reject ? "REJECTED" : "FAILED";
                error = reject ? "lab_rejected" : "lab_failed";
                if (reject) {
                    rejected++;
                } else {
                    failed++;
                }
            }
            rows.add(new RequestRecord(h.id(), null, s.tenant(), served.id(), s.promptTokens(), generated, status,
                    error, s.received(), null, null, Instant.now(), null, null, false, null));
        }
        // everything the platform's audit will be asked about is in PostgreSQL before the answer (this
        // runs on a thread that may block: the rows are written here, not handed to another scheduler)
        requests.saveAll(rows);
        lineage.flush(10, TimeUnit.SECONDS);
        awaitShipped();
        safety.flush(5_000);
        Map<String, Object> truth = new LinkedHashMap<>();
        truth.put("scenario", scenario.name());
        truth.put("faults", scenario.faults().labels());
        truth.put("started_at", started.toString());
        truth.put("finished_at", Instant.now().toString());
        truth.put("submitted", sent.size());
        truth.put("served", ok);
        truth.put("rejected", rejected);
        truth.put("failed", failed);
        truth.put("exposed_requests", exposed);
        truth.put("detected_requests", detected);
        truth.put("cross_tenant_reader_ids", readers);
        truth.put("reader_tenants", List.copyOf(readerTenants));
        truth.put("tenants", ids);
        LOG.warn("lab replay {}: {}", scenario.name(), truth);
        return truth;
    }

    private void awaitShipped() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            LineageShipper.Health h = shipper.health();
            if (h.lagEvents() == 0 && h.lagBytes() == 0) {
                return;
            }
            Thread.sleep(20);
        }
        LOG.warn("lab replay: lineage still shipping after 30 s ({})", shipper.health());
    }

    /** The lab's four tenants, created on first use (tenant name -> id). */
    private Map<String, String> labTenants() {
        Map<String, String> ids = new LinkedHashMap<>();
        List<Tenant> existing = tenants.list();
        for (String name : STORIES.keySet()) {
            ids.put(name, existing.stream().filter(t -> t.displayName().equals(name)).map(Tenant::id).findFirst()
                    .orElseGet(() -> tenants.create(name).id()));
        }
        return ids;
    }

    private record Planned(String tenantName, int[] prompt, int maxNew) {
    }

    private List<Sent> submit(Engine engine, Map<String, String> ids, List<Planned> plans) {
        List<Sent> out = new ArrayList<>();
        for (Planned p : plans) {
            String tenant = ids.get(p.tenantName());
            Instant now = Instant.now();
            RequestHandle h = engine.submit(new GenerationRequest(tenant, p.prompt(), p.maxNew(), SamplingParams.greedy()),
                    TokenListener.NONE);
            out.add(new Sent(tenant, h, p.prompt().length, now));
        }
        return out;
    }

    private static List<Planned> normalWave(ServedModel served, java.util.SplittableRandom rnd, int perTenant) {
        List<Planned> plans = new ArrayList<>();
        for (int i = 0; i < perTenant; i++) {
            for (var t : STORIES.entrySet()) {
                int[] full = served.tokenizer().encode(t.getValue(), true, false);
                int len = Math.min(full.length, 10 + rnd.nextInt(20));
                plans.add(new Planned(t.getKey(), Arrays.copyOf(full, len), 12 + rnd.nextInt(20)));
            }
        }
        return plans;
    }

    private static List<Planned> overCapacityWave(ServedModel served) {
        List<Planned> plans = new ArrayList<>();
        for (var t : STORIES.entrySet()) {
            StringBuilder text = new StringBuilder(t.getValue());
            while (served.tokenizer().encode(text.toString(), true, false).length < OVER_CAPACITY_PROMPT) {
                text.append(". ").append(t.getValue());
            }
            int[] prompt = Arrays.copyOf(served.tokenizer().encode(text.toString(), true, false), OVER_CAPACITY_PROMPT);
            plans.add(new Planned(t.getKey(), prompt, 40));
        }
        return plans;
    }

    private static void await(List<Sent> sent) {
        for (Sent s : sent) {
            try {
                s.handle().result().get(2, TimeUnit.MINUTES);
            } catch (ExecutionException e) {
                // tallied from the handle afterwards
            } catch (TimeoutException | InterruptedException e) {
                throw new IllegalStateException("lab request " + s.handle().id() + " did not finish: " + s.handle().state());
            }
        }
    }
}
