package dev.pagewarden.platform.adminport;

import dev.pagewarden.core.faultlab.FaultLab;
import dev.pagewarden.core.faultlab.LabEngine;
import dev.pagewarden.core.faultlab.Replay;
import dev.pagewarden.core.faultlab.ReplayTarget;
import dev.pagewarden.db.lineage.LineageShipper;
import dev.pagewarden.db.lineage.JournalingLineageSink;
import dev.pagewarden.platform.audit.RequestRecord;
import dev.pagewarden.platform.audit.RequestRecordRepository;
import dev.pagewarden.platform.audit.SafetyEventRecorder;
import dev.pagewarden.platform.engine.EngineHost;
import dev.pagewarden.platform.engine.LabMode;
import dev.pagewarden.platform.engine.ServedModel;
import dev.pagewarden.platform.tenant.Tenant;
import dev.pagewarden.platform.tenant.TenantService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Runs an incident-replay scenario's workload through the RUNNING platform's engine (so its faults
 * are the platform's own {@code pagewarden.lab.faults}, its lineage goes through the platform's
 * journal into its PostgreSQL, and its requests get {@code requests} rows under real lab tenants).
 * The workload and its ground truth are the installed lab's ({@link LabEngine#replay}); the truth is for
 * comparison only: incidents and blast radius come from the detectors and the lineage queries.
 */
@Component
class LabReplayRunner {
    private static final Logger LOG = LoggerFactory.getLogger(LabReplayRunner.class);
    /** Platform tenant names are the lab's tenants under this prefix, so they stand apart from real ones. */
    static final String TENANT_PREFIX = "lab-";
    private final LabMode labMode;
    private final EngineHost host;
    private final TenantService tenants;
    private final RequestRecordRepository requests;
    private final JournalingLineageSink lineage;
    private final LineageShipper shipper;
    private final SafetyEventRecorder safety;
    private final ReentrantLock oneAtATime = new ReentrantLock();

    LabReplayRunner(LabMode labMode, EngineHost host, TenantService tenants, RequestRecordRepository requests,
                    JournalingLineageSink lineage, LineageShipper shipper, SafetyEventRecorder safety) {
        this.labMode = labMode;
        this.host = host;
        this.tenants = tenants;
        this.requests = requests;
        this.lineage = lineage;
        this.shipper = shipper;
        this.safety = safety;
    }

    /** Whether the lab's jar is installed (the lab may still be off). */
    boolean installed() {
        return labMode.installed();
    }

    /** The lab's scenarios; none when the lab is off. */
    List<String> scenarios() {
        return labMode.lab().map(FaultLab::scenarios).orElse(List.of());
    }

    Map<String, Object> run(String scenarioName) throws InterruptedException {
        FaultLab lab = labMode.lab().orElseThrow(() -> new IllegalStateException("the lab is off: start the platform "
                + "with pagewarden.lab.enabled=true (never on a platform that serves tenants)"));
        List<String> needs = lab.scenarioFaults(scenarioName);
        List<String> running = labMode.engine().orElseThrow().faults();
        if (!new HashSet<>(running).equals(new HashSet<>(needs))) {
            throw new IllegalArgumentException("scenario '" + scenarioName + "' needs lab faults " + needs
                    + " but this platform runs " + running + ": restart it with pagewarden.lab.faults="
                    + String.join(",", needs));
        }
        ServedModel served = host.served().orElseThrow(() -> new IllegalStateException("no model is loaded"));
        LabEngine engine = host.lab().orElseThrow(() -> new IllegalStateException("the engine runs without the lab's oracle"));
        if (!oneAtATime.tryLock()) {
            throw new IllegalStateException("a replay is already running");
        }
        try {
            return replay(lab, engine, scenarioName, served);
        } finally {
            oneAtATime.unlock();
        }
    }

    private Map<String, Object> replay(FaultLab lab, LabEngine engine, String scenario, ServedModel served)
            throws InterruptedException {
        Map<String, String> names = labTenants(lab);
        Map<String, String> ids = new LinkedHashMap<>();
        names.forEach((labName, platformName) -> ids.put(labName, tenantId(platformName)));
        Replay replay = engine.replay(scenario, new ReplayTarget(served.engine(),
                text -> served.tokenizer().encode(text, served.tokenizer().addBos(), false), ids));
        List<RequestRecord> rows = replay.requests().stream().map(s -> new RequestRecord(s.id(), null, null, s.tenantId(),
                served.id(), s.promptTokens(), s.generatedTokens(), status(s.outcome()), error(s.outcome()), s.received(),
                null, null, s.finished(), null, null, false, null)).toList();
        // everything the platform's audit will be asked about is in PostgreSQL before the answer (this
        // runs on a thread that may block: the rows are written here, not handed to another scheduler)
        requests.saveAll(rows);
        lineage.flush(10, TimeUnit.SECONDS);
        awaitShipped();
        safety.flush(5_000);
        Map<String, Object> truth = new LinkedHashMap<>(replay.truth());
        Map<String, String> byPlatformName = new LinkedHashMap<>();
        names.forEach((labName, platformName) -> byPlatformName.put(platformName, ids.get(labName)));
        truth.put("tenants", byPlatformName);
        LOG.warn("lab replay {}: {}", scenario, truth);
        return truth;
    }

    private static String status(Replay.Outcome outcome) {
        return switch (outcome) {
            case SERVED -> "FINISHED";
            case REJECTED -> "REJECTED";
            case ABORTED, FAILED -> "FAILED";
        };
    }

    private static String error(Replay.Outcome outcome) {
        return switch (outcome) {
            case SERVED -> null;
            case REJECTED -> "lab_rejected";
            case ABORTED, FAILED -> "lab_failed";
        };
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

    /** The platform tenant name of each of the lab's tenants (lab name -> platform name). */
    private static Map<String, String> labTenants(FaultLab lab) {
        Map<String, String> names = new LinkedHashMap<>();
        for (String name : lab.tenants()) {
            names.put(name, TENANT_PREFIX + name);
        }
        return names;
    }

    /** The id of the platform tenant {@code name}, created on first use. */
    private String tenantId(String name) {
        return tenants.list().stream().filter(t -> t.displayName().equals(name)).map(Tenant::id).findFirst()
                .orElseGet(() -> tenants.create(name).id());
    }
}
