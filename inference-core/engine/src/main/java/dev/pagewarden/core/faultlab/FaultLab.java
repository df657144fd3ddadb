package dev.pagewarden.core.faultlab;

import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;

/**
 * A fault-injection lab (the incident-replay lab) installed next to the engine: a jar of its own, found
 * with {@link ServiceLoader}. The serving engine never needs one. An application that does not run in lab
 * mode never loads it; it may only ask whether one is {@link #installed}.
 */
public interface FaultLab {

    /** The service file a lab jar carries: its presence is what "installed" means. */
    String SERVICE_FILE = "META-INF/services/dev.pagewarden.core.faultlab.FaultLab";

    /** Whether a lab is on {@code loader}'s class path; loads none of its classes. */
    static boolean installed(ClassLoader loader) {
        return loader.getResource(SERVICE_FILE) != null;
    }

    /** The lab on {@code loader}'s class path, loaded; empty when none is installed. */
    static Optional<FaultLab> load(ClassLoader loader) {
        return ServiceLoader.load(FaultLab.class, loader).findFirst();
    }

    /** The names of the replay scenarios, in the lab's order. */
    List<String> scenarios();

    /** The fault labels an engine must run for {@code scenario}; IllegalArgumentException for an unknown scenario. */
    List<String> scenarioFaults(String scenario);

    /** The lab's own names of the tenants a replay's traffic comes from. */
    List<String> tenants();

    /**
     * A lab-mode engine's faults for {@code labels} (such as {@code ["skip-capacity-check",
     * "delay-transfer-writes=50"]}; empty: none), with the lab's isolation oracle watching it.
     * IllegalArgumentException for an unknown or malformed label.
     */
    LabEngine engine(List<String> labels);
}
