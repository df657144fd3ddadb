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
    public static class LabDisabledException extends RuntimeException {
        LabDisabledException() {
            this("the lab is off: start the platform with pagewarden.lab.enabled=true to replay incidents");
        }

        LabDisabledException(String message) {
            super(message);
        }
    }

    /** Thrown when the platform has no lab at all: it is a jar of its own, installed deliberately. */
    public static final class LabNotInstalledException extends LabDisabledException {
        LabNotInstalledException() {
            super("the lab is not installed: start the platform with the lab's jar (-Dloader.path=PATH/pagewarden-lab.jar) "
                    + "and pagewarden.lab.enabled=true to replay incidents");
        }
    }

    /** Why no replay can run now, or null when one can. */
    LabDisabledException unavailable() {
        if (platform.labEnabled()) {
            return null;
        }
        return platform.labInstalled() ? new LabDisabledException() : new LabNotInstalledException();
    }

    public Map<String, Object> replay(String scenario, String actor) throws InterruptedException {
        LabDisabledException off = unavailable();
        if (off != null) {
            throw off;
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
