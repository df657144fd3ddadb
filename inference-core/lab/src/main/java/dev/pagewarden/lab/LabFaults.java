package dev.pagewarden.lab;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The fault switches an engine runs with. Empty in production; anything else needs lab mode.
 *
 * @param faults      the switches that are on
 * @param delaySteps per-frame delay for {@link Fault#DELAY_TRANSFER_WRITES}, in decode steps
 */
public record LabFaults(Set<Fault> faults, int delaySteps) {

    public static final LabFaults NONE = new LabFaults(Set.of(), 0);

    public LabFaults {
        faults = faults.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(faults));
        if (delaySteps < 0) {
            throw new IllegalArgumentException("delay-transfer-writes must be >= 0 steps, got " + delaySteps);
        }
        if (faults.contains(Fault.DELAY_TRANSFER_WRITES) != (delaySteps > 0)) {
            throw new IllegalArgumentException("delay-transfer-writes needs a delay in decode steps (delay-transfer-writes=STEPS)");
        }
    }

    /** Parses labels such as {@code ["immediate-release-on-abort", "delay-transfer-writes=50"]}. */
    public static LabFaults parse(List<String> labels) {
        Set<Fault> set = EnumSet.noneOf(Fault.class);
        int delay = 0;
        for (String l : labels) {
            String label = l.trim();
            if (label.isEmpty()) {
                continue;
            }
            int eq = label.indexOf('=');
            Fault f = Fault.parse(eq < 0 ? label : label.substring(0, eq));
            if (f == Fault.DELAY_TRANSFER_WRITES) {
                if (eq < 0) {
                    throw new IllegalArgumentException("delay-transfer-writes needs a delay: delay-transfer-writes=STEPS");
                }
                try {
                    delay = Integer.parseInt(label.substring(eq + 1));
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("delay-transfer-writes=STEPS: '" + label.substring(eq + 1) + "' is not a number");
                }
            } else if (eq >= 0) {
                throw new IllegalArgumentException("lab fault " + f.label() + " takes no value");
            }
            set.add(f);
        }
        return new LabFaults(set, delay);
    }

    public boolean has(Fault f) {
        return faults.contains(f);
    }

    public boolean isEmpty() {
        return faults.isEmpty();
    }

    public boolean detectorsOn() {
        return !faults.contains(Fault.DETECTORS_OFF);
    }

    /** The engine's fault hooks for these switches, with {@code oracle} watching every step (null: none). */
    public LabHooks hooks(IsolationOracle oracle) {
        return new LabHooks(this, oracle);
    }

    /** Labels in a stable order, for reports. */
    public List<String> labels() {
        List<String> out = new ArrayList<>();
        for (Fault f : Fault.values()) {
            if (faults.contains(f)) {
                out.add(f == Fault.DELAY_TRANSFER_WRITES ? f.label() + "=" + delaySteps : f.label());
            }
        }
        return out;
    }
}
