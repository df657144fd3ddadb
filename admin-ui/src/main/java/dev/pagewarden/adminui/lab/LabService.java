package dev.pagewarden.adminui.lab;

import dev.pagewarden.incident.PlatformPort;
import dev.pagewarden.incident.audit.AdminAuditLog;
import dev.pagewarden.incident.incident.LineageSweep;
import org.springframework.stereotype.Service;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The lab page's replay: refused unless the platform runs in lab mode. The replay's own numbers are
 * returned as ground truth; the incidents that follow are filed by the detectors (during the run)
 * and by a lineage sweep right after it - never from the replay's counts.
 */
@Service
public class LabService {
    private final PlatformPort platform;
    private final LineageSweep sweep;
    private final AdminAuditLog audit;

    LabService(PlatformPort platform, LineageSweep sweep, AdminAuditLog audit) {
        this.platform = platform;
        this.sweep = sweep;
        this.audit = audit;
    }

    /** Thrown when the lab is off: the caller answers 403/409, never runs anything. */
    public static final class LabDisabledException extends RuntimeException {
        LabDisabledException() {
            super("the lab is off: start the platform with pagewarden.lab.enabled=true to replay incidents");
        }
    }

    public Map<String, Object> replay(String scenario, String actor) throws InterruptedException {
        if (!platform.labEnabled()) {
            throw new LabDisabledException();
        }
        if (scenario == null || scenario.isBlank()) {
            throw new IllegalArgumentException("'scenario' is required");
        }
        Map<String, Object> truth = platform.runLabReplay(scenario.strip());
        List<Long> incidents = sweep.sweep();
        audit.record(actor, "lab.replay", scenario, "ground truth " + truth);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("ground_truth", truth);
        out.put("incidents_filed_by_lineage_sweep", incidents.stream().distinct().toList());
        return out;
    }
}
