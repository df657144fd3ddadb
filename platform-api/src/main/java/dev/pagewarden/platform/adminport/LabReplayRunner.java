package dev.pagewarden.platform.adminport;

import dev.pagewarden.core.engine.InferenceEngine;
import dev.pagewarden.lab.IsolationOracle;
import dev.pagewarden.lab.LabFaults;
import dev.pagewarden.lab.LabHooks;
import dev.pagewarden.lab.LabTally;
import dev.pagewarden.lab.LabWorkload;
import dev.pagewarden.lab.ReplayLab;
import dev.pagewarden.core.request.RequestHandle;
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
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Runs an incident-replay scenario's workload through the RUNNING platform's engine (so its faults
 * are the platform's own {@code pagewarden.lab.faults}, its lineage goes through the platform's
 * journal into its PostgreSQL, and its requests get {@code requests} rows under real lab tenants).
 * The workload is {@link LabWorkload}'s, as in {@link ReplayLab}: normal traffic from four tenants, prompts over the pool
 * capacity, more normal traffic (the abort-during-transfer rounds are not replayed here). What it
 * returns is the lab's ground truth (its isolation oracle over the KV storage's writer shadow, counted by
 * {@link LabTally}), for comparison only:
 * incidents and blast radius come from the detectors and the lineage queries.
 */
@Component
class LabReplayRunner {
    private static final Logger LOG = LoggerFactory.getLogger(LabReplayRunner.class);
    /** Platform tenant names are the lab's tenants under this prefix, so they stand apart from real ones. */
    static final String TENANT_PREFIX = "lab-";
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
        InferenceEngine engine = served.engine();
        Instant started = Instant.now();
        List<Sent> sent = new ArrayList<>();
        LabWorkload workload = new LabWorkload(text -> served.tokenizer().encode(text, served.tokenizer().addBos(), false));
        SplittableRandom rnd = new SplittableRandom(2026);
        sent.addAll(submit(engine, ids, workload.normalWave(rnd, 3)));
        await(sent);
        sent.addAll(submit(engine, ids, workload.overCapacityWave()));
        await(sent);
        sent.addAll(submit(engine, ids, workload.normalWave(rnd, 1)));
        await(sent);
        List<RequestRecord> rows = new ArrayList<>();
        IsolationOracle oracle = host.labHooks().map(LabHooks::oracle).orElseThrow(() ->
                new IllegalStateException("the engine runs without the lab's oracle"));
        LabTally tally = new LabTally(oracle);
        TreeSet<String> readerTenants = new TreeSet<>();
        for (Sent s : sent) {
            RequestHandle h = s.handle();
            if (oracle.crossTenantSlots(h.id()) > 0) {
                readerTenants.add(s.tenant());
            }
            LabTally.Outcome outcome = tally.add(h);
            String status = switch (outcome.kind()) {
                case SERVED -> "FINISHED";
                case REJECTED -> "REJECTED";
                case ABORTED, FAILED -> "FAILED";
            };
            String error = switch (outcome.kind()) {
                case SERVED -> null;
                case REJECTED -> "lab_rejected";
                case ABORTED, FAILED -> "lab_failed";
            };
            int generated = outcome.result() == null ? 0 : outcome.result().outputTokens().length;
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
        truth.put("served", tally.served());
        truth.put("rejected", tally.rejected());
        // no request is aborted here: the platform's record has no separate abort count
        truth.put("failed", tally.failed() + tally.aborted());
        truth.put("exposed_requests", tally.exposed());
        truth.put("detected_requests", tally.detected());
        truth.put("cross_tenant_reader_ids", tally.crossTenantReaders());
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
        for (String lab : LabWorkload.TENANTS.keySet()) {
            String name = TENANT_PREFIX + lab;
            ids.put(name, existing.stream().filter(t -> t.displayName().equals(name)).map(Tenant::id).findFirst()
                    .orElseGet(() -> tenants.create(name).id()));
        }
        return ids;
    }

    private List<Sent> submit(InferenceEngine engine, Map<String, String> ids, List<LabWorkload.Planned> plans) {
        List<Sent> out = new ArrayList<>();
        for (LabWorkload.Planned p : plans) {
            String tenant = ids.get(TENANT_PREFIX + p.tenant());
            Instant now = Instant.now();
            RequestHandle h = engine.submit(p.request(tenant), TokenListener.NONE);
            out.add(new Sent(tenant, h, p.prompt().length, now));
        }
        return out;
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
